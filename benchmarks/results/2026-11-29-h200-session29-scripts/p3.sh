#!/usr/bin/env bash
# P3 (session 29): the persistent kernel's Q6_K rows (dot2: q4_k_m's attn_v and ffn_down in half the layers) in parts
# of 64 weights with 16-byte loads, as P1-P2 did for the head's matvec: half the steps a row (the 8B's down, 14,336
# columns: 7 a lane instead of 14). $OLD is f8af7b4 without the head's 4 rows (given here by env); $BS this tree.
# Predicted: 8B q4_k_m +0.5 to +1.5% (its P5 down phase, 0.73 ms a step, half of it Q6_K), 1B +0 to +1%; registers
# within +-8 of 114 (1B, 512 wide) with no spill. Logits: rounding-level (a quarter's 16 products summed per lane).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
benchmarks/kernel_registers.sh $BS /tmp/st/m w640:BLUESHIFT_PERSISTENT_WG=640 | tee /tmp/o/stats.txt
benchmarks/kernel_registers.sh $OLD /tmp/st/m w640:BLUESHIFT_PERSISTENT_WG=640 | sed 's/^/old /' | tee -a /tmp/o/stats.txt
stamp stats
BENCH_WORK=/tmp/lg timeout 90 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m old@$OLD:BLUESHIFT_HEAD_ROWS=4 new: \
  | tee /tmp/o/logits.txt
stamp logits
timeout 230 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m old@$OLD:BLUESHIFT_HEAD_ROWS=4
stamp 8b
tar -C /tmp -cJf $OUT/p3.tar.xz o
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m old@$OLD:BLUESHIFT_HEAD_ROWS=4
stamp 1b
tar -C /tmp -cJf $OUT/p3.tar.xz o
