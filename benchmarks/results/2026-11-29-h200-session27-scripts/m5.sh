#!/usr/bin/env bash
# M5 (the landed tree, 549fda7): widths past 640. The driver's register cap is 65,536 / width rounded down to 8:
# 672 -> 96 (as 640), 704 and 736 -> 88, 768 -> 80. Gate/up rounds (ffn_dim tasks over 132 x width / 32 subgroups):
#   8B (14,336): 512 7, 640 6, 672 6, 704 5, 736 5, 768 5;  1B and 3B (8,192): 512 4, 640 4, 672 3, 704 3, 736 3, 768 2.
# q/k/v rounds: 8B (3,072) 2 up to 736, 1 at 768; 3B (2,560) 1 from 640 on.
# Predicted: 672 fits 96 without spill and gains everywhere a round goes (1B, 3B: 4 -> 3, ~+3-5%; 8B: +1% for the
# warps); 704 and 736 spill a little (the kernel needs 95 at 640) and win on the 8B only if the spill costs less than
# a round (~4%).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
for w in 672 704 736; do
  r=$(BLUESHIFT_PERSISTENT_WG=$w BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/st/m \
    --prompt-tokens 16 --gen-tokens 4 --reps 1 --json 2>&1 >/dev/null | grep -i "decode_persistent" | head -1 |
    sed -E 's/.*Register Count=([0-9]+).*Local Memory Size=([0-9]+).*/\1 \2/')
  set -- $r
  echo "WG $w: registers ${1:-?} spill $(( ${2:-68719476736} - 68719476736 ))"
done | tee /tmp/o/stats.txt
stamp stats
timeout 150 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m w672:BLUESHIFT_PERSISTENT_WG=672 \
  w704:BLUESHIFT_PERSISTENT_WG=704 w736:BLUESHIFT_PERSISTENT_WG=736
stamp 8b
tar -C /tmp -cJf $OUT/m5.tar.xz o
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m w672:BLUESHIFT_PERSISTENT_WG=672 \
  w704:BLUESHIFT_PERSISTENT_WG=704 w768:BLUESHIFT_PERSISTENT_WG=768
stamp 3b
tar -C /tmp -cJf $OUT/m5.tar.xz o
timeout 70 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m w672:BLUESHIFT_PERSISTENT_WG=672 \
  w704:BLUESHIFT_PERSISTENT_WG=704
stamp 1b
tar -C /tmp -cJf $OUT/m5.tar.xz o
