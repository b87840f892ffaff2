#!/usr/bin/env bash
# L3: the final table (run_peer.sh, llama.cpp's Vulkan backend in the same command; 512 + 128 tokens, medians of 5) on
# this session's tree (the barrier fold, SPREAD by default, add_matvec's adds into x in add_rows). First, against $OLD
# (L2's tree: the same kernel before add_rows), logits and decode (predicted identical and even), and whether the team
# and width defaults still hold under SPREAD (predicted: they do; TEAM and the width were picked by whole rounds, which
# SPREAD does not change).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
timeout 60 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m new: old@$OLD:
stamp logits
timeout 60 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m old@$OLD: team1:BLUESHIFT_PERSISTENT_TEAM=1 \
  wg384:BLUESHIFT_PERSISTENT_WG=384
stamp 1b
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m old@$OLD: team2:BLUESHIFT_PERSISTENT_TEAM=2
stamp 8b
tar -C /tmp -cJf $OUT/l3.tar.xz o
for cfg in llama-3.2-1b llama-3.1-8b; do
  left=$(( 560 - ($(date +%s) - t0) ))
  [ $left -lt 60 ] && break
  timeout $left bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/l3.tar.xz o
done
cat /tmp/peer-out/peer.md
