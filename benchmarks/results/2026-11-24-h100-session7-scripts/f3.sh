#!/usr/bin/env bash
# Session 7, final check of 71cb3e7: test_coopmat on the H100 (the plan's expectations with the Q4_K k-64 default), 1B TTFT.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
timeout 200 $BS test_coopmat > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ')"
grep -E 'Failure|Which|actual' $OUT/test_coopmat.txt | head -6
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1 --quant q4_k_m >/dev/null 2>&1
$BS blueshift bench --model /tmp/m1 --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1
timeout 60 $BS blueshift bench --model /tmp/m1 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/p.json 2>/dev/null && python3 -c "
import json; d=json.load(open('/tmp/p.json')); print('1B q4_k_m prefill %.1f tok/s TTFT %.2f ms decode %.1f tok/s' % (d['prefill_tok_s'], d['ttft_ms'], d['decode_tok_s']))"
