#!/usr/bin/env bash
# Session 2026-11-24, device run 2: DOPPLER layouts on the H100 — the kernel, model and DOPPLER-bundle
# tests (padded Q4_K rows in matvec / scalar and coopmat matmul, W4A16, col, BF16), HF parity of the
# shared tiny models, DOPPLER-converted tiny bundles against transformers, then bench (512 + 128, medians
# of 5) on synth --like bundles of DOPPLER's Gemma 3 1B and 270M Q4K manifests, beside the Gemma 3 1B
# shape converted by blueshift itself (q4_k_m: its 1152-wide rows fall back to Q8_0).
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run2.txt
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
export BS_SHARED_DIR=$SHARED BS_BINARY=/tmp/bs/bundle/bin/blueshift BS_SOURCE_DIR=$PWD
for t in test_kernels test_coopmat test_model; do
  $BS $t --gtest_brief=1 2>&1 | tail -4
done
timeout 120 python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny qwen3-tiny gemma3-tiny 2>&1
[ -d .dev/carry/oracle ] && for b in .dev/carry/oracle/*/; do echo "oracle $(basename $b): $($BS blueshift verify $b 2>&1 | tail -1)"; done
w=/tmp/g; mkdir -p $w
for m in gemma-3-1b-it-q4k-ehf16-af32 gemma-3-270m-it-q4k-ehf16-af32; do
  $BS blueshift synth --like $SHARED/data/doppler/$m/manifest.json $w/$m --seed 1 | tail -1
  $BS blueshift verify --deep $w/$m | tail -2
  $BS blueshift bench --model $w/$m --prompt-tokens 64 --gen-tokens 16 --reps 1 --json >/dev/null 2>&1
  $BS blueshift bench --model $w/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $OUT/bench-$m.json
done
$BS blueshift synth --config benchmarks/configs/gemma-3-1b.json $w/hf --seed 1 >/dev/null
$BS blueshift convert $w/hf $w/own-q4 --quant q4_k_m >/dev/null
$BS blueshift bench --model $w/own-q4 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $OUT/bench-gemma-3-1b-own-q4_k_m.json
for f in $OUT/bench-*.json; do python3 -c "
import json; d=json.load(open('$f'))
print('%-48s decode %7.1f tok/s  prefill %8.0f tok/s  ttft %6.2f ms  %5.1f%% of peak %.0f GB/s  floor %.0f tok/s  load %.2f s  weights %.3f GB' % ('$(basename $f .json)', d['decode_tok_s'], d['prefill_tok_s'], d['ttft_ms'], d['pct_of_peak'], d['peak_gb_s'], d.get('floor_tok_s',0), d['load_s'], d['weight_bytes_per_token']/1e9))"; done
} 2>&1 | tee $L
