#!/usr/bin/env bash
# J3: the new defaults (teams of 2 where the o / down tasks fit one round; 512 wide on the 1B), then the final table.
#   new = f47e50f + next-i2.patch + TEAM 1 as the plain loop + the defaults (.dev/carry/bundle.tar.xz):
#         1B 512 wide TEAM 2, qwen2.5-1.5b 384 TEAM 2, 3B and 8B unchanged (512, TEAM 1)
#   old = f47e50f (.dev/carry2/bundle-old.tar.xz, $OLD)
# Predicted: 1B +8-9% (J2: 1107.8 against 1017.2), qwen2.5-1.5b +5-9% (down 768 tasks on 792 teams: 9 -> 5 dependent
# steps; o 48 parts: 2 -> 1), 3B and 8B 0. Logits: 3B / 8B identical; the 1B and qwen differ by the split's order.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
# Logits against the old tree: the new defaults, and two pure reorderings for scale (TEAM 2 at 512 is the default's
# order; PAIR_SUM=0 reduces a task's two sums with two subgroupAdds instead of one butterfly).
timeout 60 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m "old@$OLD:" new: "old-pairsum0@$OLD:BLUESHIFT_PERSISTENT_PAIR_SUM=0"
timeout 60 benchmarks/logits_ab.sh $BS qwen2.5-1.5b q4_k_m "old@$OLD:" new: team1:BLUESHIFT_PERSISTENT_TEAM=1
stamp logits
for cfg in llama-3.2-1b qwen2.5-1.5b llama-3.2-3b llama-3.1-8b; do
  case $cfg in
    llama-3.2-1b) v=("old1@$OLD:" "old2@$OLD:" "wg384team1:BLUESHIFT_PERSISTENT_WG=384,BLUESHIFT_PERSISTENT_TEAM=1") ;;
    qwen2.5-1.5b) v=("old1@$OLD:" team1-1:BLUESHIFT_PERSISTENT_TEAM=1 "old2@$OLD:" team1-2:BLUESHIFT_PERSISTENT_TEAM=1) ;;
    *) v=("old1@$OLD:") ;;
  esac
  timeout 150 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m "${v[@]}"
  stamp $cfg
  tar -C /tmp -cJf $OUT/j3.tar.xz o
done
# The final table: run_peer.sh on the 1B and 8B, q4_k_m and f16, llama.cpp's Vulkan backend in the same command.
for cfg in llama-3.2-1b llama-3.1-8b; do
  left=$(( 585 - ($(date +%s) - t0) ))
  [ $left -lt 60 ] && break
  timeout $left bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/j3.tar.xz o
done
cat /tmp/peer-out/peer.md
