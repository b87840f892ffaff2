#!/usr/bin/env bash
# Session 16, S10 (final tree): HF parity of llama-tiny and phi3-tiny, then all four rows beside llama.cpp's Vulkan
# backend (run_peer.sh, 512 + 128, medians of 5), with BLUESHIFT_LOAD_STATS=1 so each model's log holds its load split.
# Predicted: prefill, TTFT and decode as in session 15's S3 (no kernel changed but attention_fa's epilogue, same
# code); 8B f16 load 13.8-15.1 s (session 15) -> ~3 s (S9 with threads: 4.8-5.3 s; its host assembly now gone).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
export BLUESHIFT_LOAD_STATS=1
mkdir -p /tmp/peer-out
timeout 150 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "1B peer"
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/s10.tar.xz o
timeout $(( 440 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B peer"
cat /tmp/peer-out/peer.md
grep -h "load-stats\|upload-stats" /tmp/peer-out/*.log
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/s10.tar.xz o
stamp "all done"
