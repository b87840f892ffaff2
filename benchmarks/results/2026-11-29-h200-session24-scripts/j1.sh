#!/usr/bin/env bash
# J1: session 23's next-i1 and next-i2 in one lease call (three trees, no rebuild between calls).
#   new  = 1710680 + next-i1.patch + next-i2.patch (.dev/carry/bundle.tar.xz; TEAM 1 unless set)
#   old  = 1710680 (.dev/carry2/bundle-old.tar.xz, $OLD)
#   i1   = 1710680 + next-i1.patch (.dev/carry2/i1.xz: its bin/blueshift, run with the new bundle's lib)
# Predicted (session 23's headers): i1 against old 1B +1-2%, 8B +0.5-1.5%, logits identical; new at TEAM 1 against i1:
# 0; 1B TEAM 3/4 +2-3%, 3B TEAM 4 +1-2%; 1B WG 512 against 384: unknown (384 won on the H100 at PARTS 2).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsi1/bundle/bin && xz -dc .dev/carry2/i1.xz > /tmp/bsi1/bundle/bin/blueshift && chmod +x /tmp/bsi1/bundle/bin/blueshift
cp /tmp/bs/bundle/run /tmp/bsi1/bundle/ && cp -r /tmp/bs/bundle/lib /tmp/bsi1/bundle/
I1=/tmp/bsi1/bundle/run
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
# Logits over 200 decode positions at grid 132, against the old tree: old/i1/new(TEAM 1) expect 0; TEAM 3 splits the
# down sums in 3 (a rounding-level difference).
timeout 100 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m "old@$OLD:" "i1@$I1:" new: team3:BLUESHIFT_PERSISTENT_TEAM=3
stamp logits
for cfg in llama-3.2-1b llama-3.2-3b llama-3.1-8b; do
  v=()
  for i in 1 2; do
    v+=("old$i@$OLD:" "i1-$i@$I1:")
    case $cfg in
      llama-3.2-1b) v+=("team3-$i:BLUESHIFT_PERSISTENT_TEAM=3" "team4-$i:BLUESHIFT_PERSISTENT_TEAM=4"
                        "wg512-$i:BLUESHIFT_PERSISTENT_WG=512" "wg512team4-$i:BLUESHIFT_PERSISTENT_WG=512,BLUESHIFT_PERSISTENT_TEAM=4") ;;
      llama-3.2-3b) v+=("team4-$i:BLUESHIFT_PERSISTENT_TEAM=4") ;;
    esac
  done
  left=$(( 570 - ($(date +%s) - t0) ))
  timeout $left benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m "${v[@]}"
  stamp $cfg
  tar -C /tmp -cJf $OUT/j1.tar.xz o
done
