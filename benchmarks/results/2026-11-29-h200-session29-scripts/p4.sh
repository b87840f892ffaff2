#!/usr/bin/env bash
# P4 (session 29, the landed tree f8af7b4: the wide Q6_K head at 4 rows): the final table (run_peer.sh: llama.cpp's
# Vulkan backend in the same command, 512 + 128 tokens, medians of 5), then where the 1B's prefill time goes
# (bs_prefill_profile, 512 rows, the 1B models run_peer kept).
# Predicted: 1B q4_k_m ~1,165 tok/s, 8B q4_k_m ~324; f16 rows, prefill and TTFT as session 28's N6.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b; do
  keep=; [ $cfg = llama-3.2-1b ] && keep=--keep
  timeout 200 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz $keep \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/p4.tar.xz o
done
cat /tmp/peer-out/peer.md
for q in f16 q4_k_m; do
  [ -d /tmp/bs-peer/llama-3.2-1b/$q ] || continue
  timeout 60 $BS bs_prefill_profile /tmp/bs-peer/llama-3.2-1b/$q --tokens 512 --reps 5 --warm 1 | tee /tmp/o/prefill-1b-$q.txt
done
stamp profile
tar -C /tmp -cJf $OUT/p4.tar.xz o
