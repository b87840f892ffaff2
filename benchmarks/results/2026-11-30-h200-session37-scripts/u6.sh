#!/usr/bin/env bash
# U6 (session 37): the peer table at 70b08ad (TBL_SMEM the default), q4_k_m: run_peer.sh (llama.cpp's Vulkan
# backend in the same command, 512 + 128, medians of 5). The f16 rows are not rerun: the persistent kernel is off for
# F16 layers, so this session changed nothing they run (T4). Predicted: the 1B q4_k_m ~1,349 tok/s (T5's 1,326.5 +1.7%), the 8B ~359 (353.7 +1.4%);
# prefill and TTFT unchanged. Carry .gl, .dev/carry and .dev/peer.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/u6
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 250 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/u6/
  tar -C /tmp -cJf $OUT/u6.tar.xz u6
done
cat /tmp/peer-out/peer.md
