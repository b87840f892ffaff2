#!/usr/bin/env bash
# O1 (session 29; settings only, no patch): fewer dependent round trips a subgroup.
# N7 found the 8B's kernel bound by its chains of dependent steps, not by bytes: without the Q4_K codes' loads (8/9
# of the Q4_K bytes) a step took 2.752 ms against 2.858, and N3's touches (sectors pulled into L2 ahead) lost 6-17%.
# Each step is one round trip (~1 us); PARTS 2 halves the steps a task, and PIPE 1 keeps the next step's words in
# flight. Session 23's H2 lost with PARTS 2 + PIPE 1 at 512 wide (-6.9% on the 8B), most likely registers: the driver
# caps 13-16 warps at 128. At 384 wide (12 warps) it caps at 168.
# Round trips a subgroup in the 8B's gate/up phase: 640 x PARTS 1, 24 (6 rounds of 4 steps); 384 x PARTS 2, 20
# (10 of 2); 512 x PARTS 2, 14 (7 of 2) if it fits. q/k/v: 8 -> 4. Down: 14 -> 16 at 384 (two rounds of the rows).
# Predicted: 384 x PARTS 2 x PIPE 1 fits without spill (<= 168); the 8B -2% to +5% against 640 (gate/up and q/k/v
# gain, down loses); the 1B -3% to +3% against 512 (its gate/up 8,192 tasks: 4 rounds of 2 steps at 512 x PARTS 1,
# 5 of 1 at 384 x PARTS 2). Logits identical at equal PARTS (PARTS changes which lane sums which part: rounding-level).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
P=BLUESHIFT_PERSISTENT
benchmarks/kernel_registers.sh $BS /tmp/st/m w384p2:${P}_WG=384,${P}_PARTS=2,${P}_PIPE=1 \
  w512p2:${P}_WG=512,${P}_PARTS=2,${P}_PIPE=1 w384p1:${P}_WG=384 w384p2p0:${P}_WG=384,${P}_PARTS=2,${P}_PIPE=0 \
  | tee /tmp/o/stats.txt
stamp stats
BENCH_WORK=/tmp/lg timeout 80 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m base: \
  w384p2:${P}_WG=384,${P}_PARTS=2,${P}_PIPE=1 | tee /tmp/o/logits.txt
stamp logits
timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m w384p2:${P}_WG=384,${P}_PARTS=2,${P}_PIPE=1 \
  w512p2:${P}_WG=512,${P}_PARTS=2,${P}_PIPE=1 w384p2p0:${P}_WG=384,${P}_PARTS=2,${P}_PIPE=0
stamp 8b
tar -C /tmp -cJf $OUT/o1.tar.xz o
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m w384p2:${P}_WG=384,${P}_PARTS=2,${P}_PIPE=1 \
  w384p1:${P}_WG=384
stamp 1b
tar -C /tmp -cJf $OUT/o1.tar.xz o
