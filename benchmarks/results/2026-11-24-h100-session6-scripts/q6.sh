#!/usr/bin/env bash
# Session 6, run 6 (final, main): HF parity of every family on the H100 (the persistent kernel now on by default on
# GPUs, so the tiny llama / phi3 take it), then llama.cpp Vulkan beside blueshift in one command (run_peer.sh).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== parity"
python3 $SHARED/tools/make_refs.py /tmp/refs llama-tiny,qwen3-tiny,gemma3-tiny > $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
python3 $SHARED/tools/make_refs_2026.py /tmp/refs gemma2-tiny,phi3-tiny,lfm2-tiny,qwen35-tiny >> $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
timeout 200 python3 benchmarks/parity_check.py "$BS" /tmp/refs 2>&1 | tee $OUT/parity.txt | tail -14
echo "== peer"
mkdir -p /tmp/peer-out
timeout 250 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -3
timeout 250 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -3
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
