#!/usr/bin/env python3
"""Compare teacher-forced logits from the decode kernels with the prefill kernels' (`blueshift logits` without and
with --step): worst and median relative L2 per position, and top-1 agreement.

    benchmarks/step_check.py PREFILL.npy STEP.npy [LABEL]
"""
import sys

if len(sys.argv) not in (3, 4):
    sys.exit(__doc__.strip())
import numpy as np  # noqa: E402 (after the usage check, so that runs where numpy is missing)
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
if a.shape != b.shape:
    sys.exit(f"step_check: {sys.argv[1]} is {a.shape}, {sys.argv[2]} is {b.shape}: expected the same shape")
rel = np.linalg.norm(a - b, axis=1) / np.linalg.norm(a, axis=1)
label = sys.argv[3] + ": " if len(sys.argv) == 4 else ""
print(f"{label}{a.shape[0]} positions, decode vs prefill kernels: worst rel L2 {rel.max():.2e} (at {rel.argmax()}), "
      f"median {np.median(rel):.2e}, top-1 agreement {100 * (a.argmax(1) == b.argmax(1)).mean():.1f}%")
