#!/usr/bin/env bash
# Q3 (session 30): the fold with its sums in 64-bit fixed point (ec7f115, base: deterministic) against the fold with
# float atomics into x in the h16 form (b7db98c as $OLD, "fa") and no fold (FOLD_O=0). Registers (1B at 512 wide, 8B
# at 640); logits: the fold against itself (run to run), against fa and against no fold; decode on the 1B, 8B, 3B and
# qwen2.5-1.5b q4_k_m.
# Predicted: base against itself 0 rel L2 (the float-atomic fold gave 4e-3 in Q2); base within -0.5% of fa (the gate/up
# norm and the down phase read 8 more bytes a row); fa (the h16 dot) +0.3-0.5% over Q1/Q2's float-decode fold on the
# 8B; no spill at 640.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o /tmp/m1 /tmp/m8; mkdir -p /tmp/o /tmp/m1 /tmp/m8
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m1
timeout 60 benchmarks/kernel_registers.sh $BS /tmp/m1/m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0 | tee /tmp/o/regs-1b.txt
timeout 30 benchmarks/kernel_registers.sh $OLD /tmp/m1/m | sed 's/^base/fa/' | tee -a /tmp/o/regs-1b.txt
timeout 120 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m fold: fold2: fa@$OLD: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  | tee /tmp/o/logits-1b.txt
stamp logits
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m fa@$OLD: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 1b
tar -C /tmp -cJf $OUT/q3.tar.xz o
ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m8
timeout 60 benchmarks/kernel_registers.sh $BS /tmp/m8/m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0 | tee /tmp/o/regs-8b.txt
timeout 40 benchmarks/kernel_registers.sh $OLD /tmp/m8/m | sed 's/^base/fa/' | tee -a /tmp/o/regs-8b.txt
rm -rf /tmp/m8
stamp regs8
timeout 220 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m fa@$OLD: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 8b
tar -C /tmp -cJf $OUT/q3.tar.xz o
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m fa@$OLD: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 3b
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o qwen2.5-1.5b q4_k_m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp qwen
tar -C /tmp -cJf $OUT/q3.tar.xz o
