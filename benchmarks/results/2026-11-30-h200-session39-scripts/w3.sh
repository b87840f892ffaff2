#!/usr/bin/env bash
# W3: TOUCH at q/k/v's wait alone, W2's one winning site (1B +3.1% at n=4, 8B +2.4% at n=2), split in its two parts
# (_TOUCH_SITES bit 2: attention's K and V rows; bit 16: W_o), over n. The sites of the streamed phases lost (1B) or
# held even (8B): their waits are short, and a touch's round trip then holds back the last arriver. Attention and the o
# fold are a chain of dependent DRAM round trips (K, then V, then the group's wait, then W_o): each one warmed becomes
# an L2 round trip. Count: 1B K+V 1.3 MB and W_o 2.4 MB (n=2 at 32 bytes reaches 4.05 MB); 8B K+V 2.6 MB and W_o 9.4
# MB (n=1 reaches 2.57 MB, n=5 12.8 MB). Predicted: 1B site 18 even from n=2 up (all touched); K/V alone and W_o alone
# each part of the gain; 8B best where K/V and the first of W_o are in reach.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w3
T="BLUESHIFT_PERSISTENT_TOUCH"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w3/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  if [ $cfg = llama-3.2-1b ]; then v="18:1 18:2 18:4 2:2 16:2"; else v="18:1 18:2 18:3 18:5 2:1 16:2 16:4"; fi
  for r in a b; do
    ab_bench $o base$r $BS /tmp/m/m 512 128 5
    for sn in $v; do
      ab_bench $o s${sn%:*}_t${sn#*:}$r $BS /tmp/m/m 512 128 5 $T=${sn#*:} ${T}_STEP=32 ${T}_SITES=${sn%:*}
    done
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w3.tar.xz w3
done
