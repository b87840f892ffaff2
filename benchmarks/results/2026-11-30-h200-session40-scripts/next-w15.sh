#!/usr/bin/env bash
# Next (written in session 40, not run: no device time left): ATTN_TPP chosen per item (`next-tpp-per-item.patch`, on
# e7803d5; the lavapipe cases it needs are there: q4_k_m_long_items, q4_k_m_tpp4, f16_odd_tpp1). W14 found
# Qwen2.5-0.5B's shape -0.9% at 512 + 128 with TPP 2 (its items of 57-72 positions are one block either way) and +2.8% at 4,096. Now an item takes TPP (2 at head_dim 64) only where
# it is longer than one block of wg / 4 positions, else 4. The default against TPP 4, on the 1B and the 0.5B shape.
# Predicted: 0.5B 512 + 128 even (W14: -0.9%), 4,096 + 128 +2.8%; the 1B as W12-W13 (+1.9-2.1%, +5.0%).
# Carry .gl and .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w15
T=BLUESHIFT_PERSISTENT_ATTN_TPP
for cfg in qwen2.5-0.5b-shape llama-3.2-1b; do
  json=benchmarks/configs/$cfg.json
  [ -f $json ] || json=benchmarks/results/2026-11-30-h200-session40-scripts/$cfg.json
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS $json q4_k_m /tmp/m
  o=/tmp/w15/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    ab_bench $o default_$r $BS /tmp/m/m 512 128 5
    ab_bench $o tpp4_$r $BS /tmp/m/m 512 128 5 $T=4
  done
  ab_bench $o long4k_default $BS /tmp/m/m 4096 128 3
  ab_bench $o long4k_tpp4 $BS /tmp/m/m 4096 128 3 $T=4
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w15.tar.xz w15
done
