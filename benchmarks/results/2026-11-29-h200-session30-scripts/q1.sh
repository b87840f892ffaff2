#!/usr/bin/env bash
# Q1 (session 30): the o projection folded into the attention phase (c8d2490, PK_FOLD_O; default on where W_o is Q4_K)
# against BLUESHIFT_PERSISTENT_FOLD_O=0 (the o phase after a grid barrier, as before), in one command each:
# registers and spill (1B), logits (1B: fold against no fold, and fold against itself for run-to-run spread), decode
# on the 1B, 8B and 3B q4_k_m.
# Predicted: one barrier and one phase ramp fewer a layer, ~3-4.5 us: 8B +3-4.5% (32 layers of 3.08 ms), 1B +4-6%
# (16 of 0.86 ms), 3B +3-5%. Logits at the h16 kernel's reordering level (~5e-3 rel L2), fold against itself below 1e-4.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o /tmp/m1; mkdir -p /tmp/o /tmp/m1
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m1
timeout 60 benchmarks/kernel_registers.sh $BS /tmp/m1/m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0 | tee /tmp/o/regs-1b.txt
stamp regs
timeout 90 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0 fold: fold2: \
  | tee /tmp/o/logits-1b.txt
stamp logits
tar -C /tmp -cJf $OUT/q1.tar.xz o
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 1b
tar -C /tmp -cJf $OUT/q1.tar.xz o
timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 8b
tar -C /tmp -cJf $OUT/q1.tar.xz o
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 3b
tar -C /tmp -cJf $OUT/q1.tar.xz o
