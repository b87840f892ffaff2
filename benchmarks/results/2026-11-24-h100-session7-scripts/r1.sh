#!/usr/bin/env bash
# Session 7, run 1: weight_chunk.glsl decodes into f16 (codes OR-ed into 1024.0, packed sub + fma) instead of
# int->f32->f16 conversions. Correctness (test_coopmat on the H100), serve N=16 and prefill TTFT, base vs new
# alternating, prefill logits new vs base.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsbase && tar -C /tmp/bsbase -xJf .dev/s7/base.tar.xz
NEW=$BS; OLD=/tmp/bsbase/bundle/run
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
true

mk() { $NEW blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null 2>&1
       $NEW blueshift convert /tmp/hf /tmp/$2 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf; }
mk llama-3.2-1b m1; echo "m1 ready $(( $(date +%s) - t0 )) s"
sv() { timeout 60 $1 blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json --parallel 16 ${3:-} > /tmp/s.json 2>/tmp/s.err \
  && python3 -c "
import json; d=json.load(open('/tmp/s.json')); by=d.get('profile_ms_by_kernel') or {}
print('serve16 %-4s %8.1f tok/s %.3f ms/step' % ('$2', d['aggregate_decode_tok_s'], d['ms_per_step']), ' '.join('%s %.3f' % kv for kv in sorted(by.items(), key=lambda kv: -kv[1])[:8]))" \
  || { echo "serve $2 failed: $(tail -2 /tmp/s.err)"; }; }
pf() { timeout 90 $1 blueshift bench --model /tmp/$2 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/p.json 2>/tmp/p.err \
  && python3 -c "
import json; d=json.load(open('/tmp/p.json'))
print('prefill %-3s %-4s %8.1f tok/s TTFT %.2f ms' % ('$2', '$3', d['prefill_tok_s'], d.get('ttft_ms', 0)))" \
  || { echo "prefill $2 $3 failed: $(tail -2 /tmp/p.err)"; }; }
$NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1
timeout 60 $NEW blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json > /tmp/b1.json 2>/dev/null && python3 -c "
import json; d=json.load(open('/tmp/b1.json')); print('batch 1 new %.1f tok/s, bar 6x -> %.3f ms/step at N=16' % (d['decode_tok_s'], 16e3/(6*d['decode_tok_s'])))"
for r in 1 2; do sv $OLD old; sv $NEW new; done
sv $NEW newprof --profile
for r in 1 2; do pf $OLD m1 old; pf $NEW m1 new; done
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range(300)))")
$OLD blueshift logits --model /tmp/m1 --tokens $T --out /tmp/old.npy >/dev/null 2>&1
$NEW blueshift logits --model /tmp/m1 --tokens $T --out /tmp/new.npy >/dev/null 2>&1
python3 .dev/s7/cmp.py /tmp/new.npy /tmp/old.npy; rm -f /tmp/*.npy
rm -rf /tmp/m1; echo "1B done $(( $(date +%s) - t0 )) s"
mk llama-3.1-8b m8; echo "m8 ready $(( $(date +%s) - t0 )) s"
for r in 1 2; do pf $OLD m8 old; pf $NEW m8 new; done
rm -rf /tmp/m8; echo "all done $(( $(date +%s) - t0 )) s"
