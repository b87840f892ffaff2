#!/usr/bin/env bash
# H6: the final table on the landed tree (0c87044: PIPE, PARTS 1 for the f16 and int forms): run_peer.sh on the 1B
# and 8B, q4_k_m and f16, llama.cpp's Vulkan backend in the same command (512 + 128, medians of 5).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout $(( 290 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/h6.tar.xz o
done
cat /tmp/peer-out/peer.md
