#!/usr/bin/env bash
# W21: ATTN_TPP 2 (the default at head_dim 64) against 4 in one call, on Qwen2.5-0.5B's shape and the 1B, 512 + 128.
# W14 put the 0.5B shape at -0.9% with TPP 2; W15 compared the per-item form, not TPP 2. Same bundle as W20.
# Predicted: 0.5B shape TPP 2 -0.5..-1.5%; 1B TPP 2 +1.9% (session 40, W12-W13).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w21 $OUT
T=BLUESHIFT_PERSISTENT_ATTN_TPP
S=benchmarks/results/2026-12-01-h200-session41-scripts
for cfg in qwen2.5-0.5b-shape llama-3.2-1b; do
  json=benchmarks/configs/$cfg.json
  [ -f $json ] || json=$S/$cfg.json
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS $json q4_k_m /tmp/m
  o=/tmp/w21/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o tpp2_$r $BS /tmp/m/m 512 128 5 $T=2
    ab_bench $o tpp4_$r $BS /tmp/m/m 512 128 5 $T=4
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w21.tar.xz w21
done
