#!/usr/bin/env bash
# Session 2026-11-24, device run 6: after merging the prefill tile change (64x64k64 for small grids,
# 128x128 from 128 workgroups): the tensor-core tests with their corrected tile names, HF parity through
# the prefill path, and the 1B / 8B q4_k_m prefill at 512 tokens.
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run6.txt
{
export BS_SHARED_DIR=$SHARED BS_BINARY=/tmp/bs/bundle/bin/blueshift BS_SOURCE_DIR=$PWD
$BS test_coopmat --gtest_brief=1 2>&1 | tail -4
timeout 120 python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny qwen3-tiny gemma3-tiny gemma2-tiny phi3-tiny 2>&1
timeout 60 python3 benchmarks/parity_check.py $BS tests/model/goldens gemma3-pad320 2>&1
for c in llama-3.2-1b llama-3.1-8b; do
  w=/tmp/p6/$c; mkdir -p $w
  $BS blueshift synth --config benchmarks/configs/$c.json $w/hf --seed 1 >/dev/null
  $BS blueshift convert $w/hf $w/m --quant q4_k_m >/dev/null; rm -rf $w/hf
  $BS blueshift bench --model $w/m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $OUT/bench-$c.json
  python3 -c "import json;d=json.load(open('$OUT/bench-$c.json'));print('$c q4_k_m: prefill %.0f tok/s, ttft %.1f ms, decode %.1f tok/s' % (d['prefill_tok_s'], d['ttft_ms'], d['decode_tok_s']))"
  rm -rf $w
done
} 2>&1 | tee $L
