#!/usr/bin/env bash
# N6 (the landed tree: dot2's Q6_K rows in 8-byte loads): the final table (run_peer.sh: llama.cpp's Vulkan backend in
# the same command, 512 + 128 tokens, medians of 5), then where the 8B q4_k_m kernel's time goes at 640 wide
# (persistent_phases.sh: session 26's L4 was at 512).
# Predicted: 8B q4_k_m ~323 tok/s (N5's q1), 1B q4_k_m ~1,162; the f16 rows, prefill and TTFT as session 27's M6.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 200 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/n6.tar.xz o
done
cat /tmp/peer-out/peer.md
timeout 150 benchmarks/persistent_phases.sh $BS /tmp/bs-peer/llama-3.1-8b/q4_k_m 32 | tee /tmp/o/phases-8b.txt
stamp phases
tar -C /tmp -cJf $OUT/n6.tar.xz o
