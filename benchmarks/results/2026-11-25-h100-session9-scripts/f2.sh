#!/usr/bin/env bash
# Session 9, final run F2: llama.cpp's Vulkan backend beside blueshift in one command (run_peer.sh), at 028e8ac
# (KHR coopmat kernels, flash attention, split-k). 512 + 128 tokens, medians of 5.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
mkdir -p /tmp/peer-out; t0=$(date +%s)
timeout 230 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -3
echo "1B done $(( $(date +%s) - t0 )) s"
timeout 340 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -3
echo "8B done $(( $(date +%s) - t0 )) s"
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
