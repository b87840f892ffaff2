#!/usr/bin/env bash
# Session 7, run 2: attention writes the o projection's f16 input (no to_f16), rms_norm holds its values in registers.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsbase && tar -C /tmp/bsbase -xJf .dev/s7/base.tar.xz
NEW=$BS; OLD=/tmp/bsbase/bundle/run
t0=$(date +%s)
timeout 150 $NEW test_coopmat > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ')"
timeout 150 $NEW test_gpu --gtest_filter='KernelsSlots.*:KernelsBasic.*' > $OUT/test_gpu.txt 2>&1; echo "test_gpu rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_gpu.txt | tr '\n' ' ')"
mk() { $NEW blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null 2>&1
       $NEW blueshift convert /tmp/hf /tmp/$2 --quant ${3:-q4_k_m} >/dev/null 2>&1; rm -rf /tmp/hf; }
mk llama-3.2-1b m1; echo "m1 ready $(( $(date +%s) - t0 )) s"
sv() { timeout 60 $1 blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json --parallel 16 ${3:-} > /tmp/s.json 2>/tmp/s.err \
  && python3 -c "
import json; d=json.load(open('/tmp/s.json')); by=d.get('profile_ms_by_kernel') or {}
print('serve16 %-4s %8.1f tok/s %.3f ms/step disp %s bar %s' % ('$2', d['aggregate_decode_tok_s'], d['ms_per_step'], d.get('dispatches_per_step'), d.get('barriers_per_step')), ' '.join('%s %.3f' % kv for kv in sorted(by.items(), key=lambda kv: -kv[1])[:9]))" \
  || { echo "serve $2 failed: $(tail -2 /tmp/s.err)"; }; }
pf() { timeout 90 $1 blueshift bench --model /tmp/$2 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/p.json 2>/tmp/p.err \
  && python3 -c "
import json; d=json.load(open('/tmp/p.json'))
print('bench %-3s %-4s prefill %8.1f tok/s TTFT %.2f ms decode %.1f tok/s' % ('$2', '$3', d['prefill_tok_s'], d.get('ttft_ms', 0), d['decode_tok_s']))" \
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
rm -rf /tmp/m1; mk llama-3.2-1b f1 f16; echo "f1 ready $(( $(date +%s) - t0 )) s"
for r in 1 2; do pf $OLD f1 old; pf $NEW f1 new; done
rm -rf /tmp/f1; echo "all done $(( $(date +%s) - t0 )) s"
