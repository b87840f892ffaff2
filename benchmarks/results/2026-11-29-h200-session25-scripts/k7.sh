#!/usr/bin/env bash
# K7: the final table (run_peer.sh, llama.cpp's Vulkan backend in the same command; 512 + 128 tokens, medians of 5) on
# this session's tree: STREAM (K1), EARLY 2 by default (K6). Then, with the time left, EARLY 2 against 0 on qwen2.5-1.5b
# and the 3B (not measured in K6).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b; do
  left=$(( 300 - ($(date +%s) - t0) ))
  [ $left -lt 60 ] && break
  timeout $left bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/k7.tar.xz o
done
cat /tmp/peer-out/peer.md
for cfg in qwen2.5-1.5b llama-3.2-3b; do
  left=$(( 300 - ($(date +%s) - t0) ))
  [ $left -lt 35 ] && break
  timeout $left benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m e0:BLUESHIFT_PERSISTENT_EARLY=0
  stamp $cfg
  tar -C /tmp -cJf $OUT/k7.tar.xz o
done
