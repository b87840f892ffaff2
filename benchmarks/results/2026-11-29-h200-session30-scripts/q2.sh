#!/usr/bin/env bash
# Q2 (session 30): the fold with each invocation's first W_o block loaded before the group wait (4096754, base)
# against Q1's fold (c8d2490 as $OLD: loaded after the wait and the merge) and against no fold (FOLD_O=0).
# Registers at 512 (1B) and 640 wide (8B); the fold's run-to-run spread of the logits (fold against itself);
# decode on the 1B, 8B, 3B and qwen2.5-1.5b q4_k_m.
# Predicted: the load's round trip (~1-1.5 us a layer) off the fold's critical path: 1B +1.5-2% and 8B +0.5-1% over
# Q1's fold; no spill at 640 (the driver's cap 96).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o /tmp/m1 /tmp/m8; mkdir -p /tmp/o /tmp/m1 /tmp/m8
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m1
timeout 60 benchmarks/kernel_registers.sh $BS /tmp/m1/m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0 | tee /tmp/o/regs-1b.txt
timeout 90 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m fold: fold2: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  | tee /tmp/o/logits-1b.txt
stamp logits
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m old@$OLD: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 1b
tar -C /tmp -cJf $OUT/q2.tar.xz o
ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m8
timeout 90 benchmarks/kernel_registers.sh $BS /tmp/m8/m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0 | tee /tmp/o/regs-8b.txt
rm -rf /tmp/m8
stamp regs8
timeout 220 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m old@$OLD: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 8b
tar -C /tmp -cJf $OUT/q2.tar.xz o
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m old@$OLD: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 3b
tar -C /tmp -cJf $OUT/q2.tar.xz o
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o qwen2.5-1.5b q4_k_m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp qwen
tar -C /tmp -cJf $OUT/q2.tar.xz o
