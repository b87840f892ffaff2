#!/usr/bin/env python3
"""Compare two runs' teacher-forced logits (`blueshift logits --out`, [positions, vocab]) against the first:
worst and median relative L2 per position, and top-1 agreement. decode_check.sh compares the decode kernels (--step)
with the prefill kernels; coopmat_check.sh the tensor-core prefill with the scalar one (--flips).

    benchmarks/logits_diff.py REF.npy GOT.npy [--what TEXT] [--label TEXT] [--flips]
"""
import argparse

ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
ap.add_argument("ref", help="the reference run's logits (.npy)")
ap.add_argument("got", help="the compared run's logits (.npy)")
ap.add_argument("--what", default="decode vs prefill kernels", help="what is compared, for the printed line")
ap.add_argument("--label", help="printed before the line, e.g. the setting under test")
ap.add_argument("--flips", action="store_true",
                help="also where the top-1 differs: the reference's gap between its top two logits there, against the "
                     "logits' spread (a near-tie flips under any rounding change; a large gap means a real error)")
args = ap.parse_args()
import numpy as np  # noqa: E402 (after the usage check, so that runs where numpy is missing)

a, b = np.load(args.ref), np.load(args.got)
if a.shape != b.shape:
    raise SystemExit(f"logits_diff: {args.ref} is {a.shape}, {args.got} is {b.shape}: expected the same shape")
rel = np.linalg.norm(a - b, axis=1) / np.linalg.norm(a, axis=1)
label = args.label + ": " if args.label else ""
print(f"{label}{a.shape[0]} positions, {args.what}: worst rel L2 {rel.max():.2e} (at {rel.argmax()}), "
      f"median {np.median(rel):.2e}, top-1 agreement {100 * (a.argmax(1) == b.argmax(1)).mean():.1f}%")
if args.flips:
    s = np.sort(a, axis=1)
    gap = (s[:, -1] - s[:, -2]) / a.std(axis=1)
    diff = np.nonzero(a.argmax(1) != b.argmax(1))[0]
    print("top-1 flips at", diff.tolist(), "top-2 gap / std there:", np.round(gap[diff], 4).tolist(),
          f"(median gap elsewhere {np.median(gap):.3f})")
