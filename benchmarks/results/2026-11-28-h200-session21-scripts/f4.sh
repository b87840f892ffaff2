#!/usr/bin/env bash
# Session 21, F4: the final table. run_peer.sh on the 1B and 8B, q4_k_m and f16, llama.cpp's Vulkan backend in the
# same command. Run at a774297 with BLUESHIFT_PERSISTENT_MERGE=2, F3's winner, which the next commit made the only
# merge (the same shader code with the switch folded away).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
export BLUESHIFT_PERSISTENT_MERGE=2
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o4 /tmp/peer-out
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout $(( 585 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o4/; tar -C /tmp -cJf $OUT/f4.tar.xz o4
done
cat /tmp/peer-out/peer.md
