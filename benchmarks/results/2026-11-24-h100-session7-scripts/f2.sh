#!/usr/bin/env bash
# Session 7, final run B: llama.cpp's Vulkan backend beside blueshift in one command (run_peer.sh), at main's end.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/peer-out
timeout 250 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -3
timeout 300 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -3
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
