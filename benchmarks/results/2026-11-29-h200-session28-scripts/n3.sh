#!/usr/bin/env bash
# N3: the matvec loops touch their weights TOUCH steps ahead (one word a lane a row: a 32-byte sector into L2 for one
# register), so that the real loads meet L2, not DRAM. Variants: TOUCH 1-3; TOUCH_KEEP=0 (volatile words never read);
# TOUCH_WHERE=1 (the gate/up stream alone); TOUCH 2 at 512 wide on the 8B.
# Predicted: 8B +5-10% at TOUCH 2 (P4's steps from DRAM's ~1.06 us toward L2's; P4 is 0.92 of 2.88 ms), the 1B +2-5%;
# logits identical (no arithmetic moves).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
T=BLUESHIFT_PERSISTENT_TOUCH
benchmarks/kernel_registers.sh $BS /tmp/st/m w640:BLUESHIFT_PERSISTENT_WG=640 t1w640:$T=1,BLUESHIFT_PERSISTENT_WG=640 \
  t2w640:$T=2,BLUESHIFT_PERSISTENT_WG=640 t3w640:$T=3,BLUESHIFT_PERSISTENT_WG=640 \
  t2k0w640:$T=2,${T}_KEEP=0,BLUESHIFT_PERSISTENT_WG=640 t2:$T=2 t3:$T=3 | tee /tmp/o/stats.txt
stamp stats
BENCH_WORK=/tmp/lg timeout 80 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m base: t2:$T=2 | tee /tmp/o/logits.txt
stamp logits
timeout 220 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m t2:$T=2 t1:$T=1 t3:$T=3 t2k0:$T=2,${T}_KEEP=0 \
  t2gu:$T=2,${T}_WHERE=1 t2w512:$T=2,BLUESHIFT_PERSISTENT_WG=512
stamp 8b
tar -C /tmp -cJf $OUT/n3.tar.xz o
timeout 80 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m t2:$T=2 t3:$T=3 t2k0:$T=2,${T}_KEEP=0
stamp 1b
tar -C /tmp -cJf $OUT/n3.tar.xz o
