#!/usr/bin/env bash
# P2 (session 29): the wide Q6_K matvec (P1's prototype, now matvec_q6k.comp's main) in the model. $OLD is 3aa4de4
# (the 8-byte parts), $BS this tree; BLUESHIFT_HEAD_ROWS=4 gives the head the 4 rows P1 found best for the wide form
# (the default is still 2 here).
# Predicted: the 1B q4_k_m head 0.094 -> ~0.082 ms at 4 rows (decode ~+1.1%), the 8B's 0.178 -> ~0.157 (~+0.7%);
# at 2 rows about even with old (P1: 94.5 against 90.6 us isolated). Logits: rounding-level (the same sums per
# quarter, in another grouping of lanes).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
BENCH_WORK=/tmp/lg timeout 90 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m old@$OLD: new: r4:BLUESHIFT_HEAD_ROWS=4 \
  | tee /tmp/o/logits.txt
stamp logits
timeout 60 $BS bs_gemv_bench --reps 40 --dtype q6k --shape 128256x2048,128256x4096 --wg 32,64 --rows 2,4,8 | tail -13
stamp gemv
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m old@$OLD: r4:BLUESHIFT_HEAD_ROWS=4 r8:BLUESHIFT_HEAD_ROWS=8
stamp 1b
timeout 230 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m old@$OLD: r4:BLUESHIFT_HEAD_ROWS=4
stamp 8b
tar -C /tmp -cJf $OUT/p2.tar.xz o
