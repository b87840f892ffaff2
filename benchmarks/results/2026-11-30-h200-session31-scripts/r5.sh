#!/usr/bin/env bash
# R5 (session 31, the tree with count_in / await_word landed): the final table (run_peer.sh: llama.cpp's Vulkan backend
# in the same command, 512 + 128 tokens, medians of 5).
# Predicted: 1B q4_k_m ~1,215 tok/s, 8B q4_k_m ~340 (R4); the f16 rows (per-phase decode), prefill and TTFT as session
# 30's Q5 (the persistent kernel is not in them).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
rm -rf /tmp/o; mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 240 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/r5.tar.xz o
done
cat /tmp/peer-out/peer.md
