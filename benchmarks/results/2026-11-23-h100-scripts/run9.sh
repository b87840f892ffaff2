#!/usr/bin/env bash
# Session 4, device run 9: the final commit — HF parity and a 1B q4_k_m bench (512 + 128, 5 reps).
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run9.txt
{
timeout 60 python3 benchmarks/parity_check.py $BS $SHARED/data/models 2>&1
w=/tmp/p9; mkdir -p $w
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json $w/hf --seed 1 >/dev/null
$BS blueshift convert $w/hf $w/m --quant q4_k_m >/dev/null; rm -rf $w/hf
$BS blueshift bench --model $w/m --prompt-tokens 64 --gen-tokens 16 --reps 1 --json >/dev/null
$BS blueshift bench --model $w/m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $OUT/bench-1b.json
python3 -c "
import json; d=json.load(open('$OUT/bench-1b.json'))
print('1B q4_k_m: decode %.1f tok/s, prefill %.0f tok/s, ttft %.2f ms, %d dispatches, %d barriers, vram %.3f GiB, load %.2f s' % (d['decode_tok_s'], d['prefill_tok_s'], d['ttft_ms'], d['dispatches_per_token'], d['barriers_per_token'], d['vram_bytes']/2**30, d['load_s']))"
} 2>&1 | tee $L
