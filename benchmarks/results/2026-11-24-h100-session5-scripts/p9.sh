#!/usr/bin/env bash
# P9: llama.cpp Vulkan beside blueshift in one command (benchmarks/peer/run_peer.sh), at this tree (session 5 end).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/peer-out
timeout 280 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -5
timeout 290 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -5
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
