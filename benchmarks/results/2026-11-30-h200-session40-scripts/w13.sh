#!/usr/bin/env bash
# W13 (session 40): the shipped default (TPP 2 where head_dim <= 64, picked by persistent.cpp) against TPP 4 on the
# 1B q4_k_m in one command, then the 1B's peer table (run_peer.sh, llama.cpp's Vulkan backend in the same command,
# 3 rounds). The 8B's default did not change (head_dim 128: TPP 4), so its session 39 row stands.
# Predicted: default / TPP 4 as W12 (+1.9%); the 1B's decode row ~1,405-1,415 tok/s against session 39's 1,382.
# Carry .gl, .dev/carry and .dev/peer.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w13
T=BLUESHIFT_PERSISTENT_ATTN_TPP
cfg=llama-3.2-1b
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
o=/tmp/w13/$cfg; mkdir -p $o
$BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
for r in a b; do
  ab_bench $o default_$r $BS /tmp/m/m 512 128 5
  ab_bench $o tpp4_$r $BS /tmp/m/m 512 128 5 $T=4
done
stamp "$cfg A/B done"
timeout 200 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/$cfg.json --quant q4_k_m --out /tmp/w13/peer-$cfg --work /tmp/bs-peer --rounds 3 2>&1 | tail -3
stamp "$cfg peer"
cat /tmp/w13/peer-$cfg/peer.md
tar -C /tmp -cJf $OUT/w13.tar.xz w13
