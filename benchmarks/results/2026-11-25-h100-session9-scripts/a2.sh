#!/usr/bin/env bash
# Session 9, run A2: HF parity of the shared tiny models (benchmarks/parity_check.py: prefill and decode logits,
# greedy ids) with the one-pass tensor-core attention (the head_dim-64 models take it) and the KHR coopmat
# kernels, then with BLUESHIFT_FA_ATTENTION=0 for comparison.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
timeout 200 python3 benchmarks/parity_check.py "$BS" .dev/s9/models 2>&1 | tee $OUT/parity_fa.txt
BLUESHIFT_FA_ATTENTION=0 timeout 200 python3 benchmarks/parity_check.py "$BS" .dev/s9/models 2>&1 | tee $OUT/parity_tiled.txt
