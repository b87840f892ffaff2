#!/usr/bin/env bash
# T5 (session 36): the peer table at b8da5bd's code (POLL_COUNT the default), q4_k_m: run_peer.sh (llama.cpp's Vulkan
# backend in the same command, 512 + 128, medians of 5). The f16 rows are not rerun: the persistent kernel is off for
# F16 layers, so this session changed nothing they run (T4). Predicted: the 1B q4_k_m ~1,350 tok/s (session 34's
# 1,307 +3.6%), the 8B ~358 (+0.6%); prefill and TTFT unchanged. Carry .gl, .dev/carry and .dev/peer.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/t5
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 250 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/t5/
  tar -C /tmp -cJf $OUT/t5.tar.xz t5
done
cat /tmp/peer-out/peer.md
