#!/usr/bin/env bash
# M6 (the landed tree, 549fda7): the final table (run_peer.sh: llama.cpp's Vulkan backend in the same command,
# 512 + 128 tokens, medians of 5), then the width rule on a shape it was not fitted to: qwen2.5-7b (hidden 3584,
# ffn 18,944: gate/up 9 rounds at 512, 8 at 640, so the rule takes 640).
# Predicted: 8B q4_k_m ~322 tok/s (M4), the rest as session 26's L3; qwen2.5-7b +3-5% at 640 against 512.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 200 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/m6.tar.xz o
done
cat /tmp/peer-out/peer.md
timeout 150 benchmarks/decode_ab.sh $BS /tmp/o qwen2.5-7b q4_k_m w512:BLUESHIFT_PERSISTENT_WG=512
stamp qwen7b
tar -C /tmp -cJf $OUT/m6.tar.xz o
