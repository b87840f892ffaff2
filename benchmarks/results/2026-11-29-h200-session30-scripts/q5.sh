#!/usr/bin/env bash
# Q5 (session 30, the landed tree b4c6aed: the o projection folded into the attention phase): the final table
# (run_peer.sh: llama.cpp's Vulkan backend in the same command, 512 + 128 tokens, medians of 5).
# Predicted: 1B q4_k_m ~1,210 tok/s, 8B q4_k_m ~336 (Q3-Q4); the f16 rows (per-phase decode), prefill and TTFT as
# session 29's P4.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 220 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/q5.tar.xz o
done
cat /tmp/peer-out/peer.md
