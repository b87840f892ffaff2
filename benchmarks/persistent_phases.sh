#!/usr/bin/env bash
# Where the persistent decode kernel's time goes, phase by phase (decode_persistent.comp's p.skip bits):
#   benchmarks/persistent_phases.sh RUNNER MODEL [gen_tokens]
# Runs `bench --json` (16-token prompt, so attention is short) with every phase's work, with none (barriers and
# staging), with no work and no staging (the grid barriers alone), with no work and one kind of staging taken away (the
# norms' of P1 and P4: bit 7; P5's h: bit 8), and with one phase's work at a time, and
# prints decode_persistent's GPU time a step for each, the per-barrier and per-phase staging cost, and each
# phase's work a step (its time less the no-work time), and everything with the Q4_K / F16 matvecs loading their
# weights but skipping the math (bit 6): how much of the time is the loads. Then BLUESHIFT_PERSISTENT_PROBE's bits, one
# at a time: what a step loses without the Q4_K headers (1), without x from the staging area (2), without the subgroup
# reductions at the tasks' ends (4), without the Q4_K codes (8). Timing breakdowns only: the skipped runs' logits are
# wrong. Bit 2 acts on the float Q4_K form only: set BLUESHIFT_Q4K_DOT=float for the whole run to break that form down
# (the default, decode_persistent_h16, reads x from its f16 slots).
# Needs a model the persistent kernel takes (BLUESHIFT_PERSISTENT=1 forces it where it is off by default).
set -euo pipefail
runner=$1; model=$2; gen=${3:-64}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for s in 0 31 63 159 287 30 29 27 23 15 64; do
  BLUESHIFT_PERSISTENT_SKIP=$s "$runner" blueshift bench --model "$model" --prompt-tokens 16 --gen-tokens "$gen" --reps 3 \
    --json > "$tmp/$s.json"
done
for b in 1 2 4 8; do
  BLUESHIFT_PERSISTENT_PROBE=$b "$runner" blueshift bench --model "$model" --prompt-tokens 16 --gen-tokens "$gen" --reps 3 \
    --json > "$tmp/probe$b.json"
done
python3 - "$tmp" <<'PY'
import json, sys
d = {s: json.load(open(f"{sys.argv[1]}/{s}.json")) for s in (0, 31, 63, 159, 287, 30, 29, 27, 23, 15, 64)}
def kernel_ms(run):  # the dispatch carries the variant's name (decode_persistent, _h16, _i8, ...)
    return next((ms for name, ms in run["gpu_ms_by_dispatch"].items() if name.startswith("decode_persistent")), None)
t = {s: kernel_ms(v) for s, v in d.items()}
if t[0] is None:
    sys.exit("persistent_phases.sh: the model's decode did not take the persistent kernel (BLUESHIFT_PERSISTENT=1 forces it)")
print(f"decode_persistent a step: everything {t[0]:.4f} ms, no phase work {t[31]:.4f}, barriers alone {t[63]:.4f}")
print(f"phase work in all: {t[0] - t[31]:.4f} ms; staging {t[31] - t[63]:.4f} ms: the norms' (P1, P4) {t[31] - t[159]:.4f},"
      f" P5's h {t[31] - t[287]:.4f}, the rest {t[159] + t[287] - t[31] - t[63]:.4f}")
for s, name in ((30, "P1 q/k/v"), (29, "P2 attention"), (27, "P3 o"), (23, "P4 gate/up"), (15, "P5 down")):
    print(f"  {name:13s} {t[s] - t[31]:.4f} ms a step")
print(f"with the Q4_K / F16 matvecs' weight loads alone (no math): {t[64]:.4f} ms; their math adds {t[0] - t[64]:.4f} ms")
for b, name in ((1, "the Q4_K headers (and their scale decode)"), (2, "x from the staging area (float Q4_K)"),
                (4, "the subgroup reductions"), (8, "the Q4_K codes' loads")):
    tb = kernel_ms(json.load(open(f"{sys.argv[1]}/probe{b}.json")))
    print(f"  without {name:42s} {tb:.4f} ms ({t[0] - tb:+.4f})")
PY
