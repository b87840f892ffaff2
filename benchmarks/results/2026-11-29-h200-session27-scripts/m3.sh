#!/usr/bin/env bash
# M3 (the experimental build of M2, plus PKX_E1: the attention merge's staging takes one element an invocation, not 2).
# M2 found the attention merge's staging (kMF 4 splits x 2 elements, 3 loads each, in flight together) setting the
# peak: att2 (kMF 2) took the kernel from 119 to 112 registers at 512 wide and, at 640, under the driver's 96 cap
# without spill (95). e1 (1 element, kMF 4) holds as many loads as att2; e1att2 half that.
# Predicted: e1 the same registers as att2 and logits identical to base (no arithmetic changes); at 640 without
# spill, the 8B +5-6% (M1's +4.2% less the spill), the 1B and 3B even or better with 640 (M2: -8% with the spill).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
for x in e1 e1att2; do
  for w in 512 640 768; do
    r=$(env ${x:+BLUESHIFT_PKX=$x} BLUESHIFT_PERSISTENT_WG=$w BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/st/m \
      --prompt-tokens 16 --gen-tokens 4 --reps 1 --json 2>&1 >/dev/null | grep -i "decode_persistent" | head -1 |
      sed -E 's/.*Register Count=([0-9]+).*Local Memory Size=([0-9]+).*/\1 \2/')
    set -- $r
    echo "${x:-base} WG $w: registers ${1:-?} spill $(( ${2:-68719476736} - 68719476736 ))"
  done
done | tee /tmp/o/stats.txt
stamp stats
BENCH_WORK=/tmp/lg timeout 100 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m base: e1:BLUESHIFT_PKX=e1 \
  att2:BLUESHIFT_PKX=att2 | tee /tmp/o/logits.txt
stamp logits
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m e1:BLUESHIFT_PKX=e1 att2:BLUESHIFT_PKX=att2 \
  e1_640:BLUESHIFT_PKX=e1,BLUESHIFT_PERSISTENT_WG=640 att2_640:BLUESHIFT_PKX=att2,BLUESHIFT_PERSISTENT_WG=640
stamp 1b
tar -C /tmp -cJf $OUT/m3.tar.xz o
timeout 220 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m e1:BLUESHIFT_PKX=e1 \
  e1_640:BLUESHIFT_PKX=e1,BLUESHIFT_PERSISTENT_WG=640 att2_640:BLUESHIFT_PKX=att2,BLUESHIFT_PERSISTENT_WG=640 \
  e1att2_768:BLUESHIFT_PKX=e1att2,BLUESHIFT_PERSISTENT_WG=768
stamp 8b
tar -C /tmp -cJf $OUT/m3.tar.xz o
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m e1:BLUESHIFT_PKX=e1 \
  e1_640:BLUESHIFT_PKX=e1,BLUESHIFT_PERSISTENT_WG=640
stamp 3b
tar -C /tmp -cJf $OUT/m3.tar.xz o
