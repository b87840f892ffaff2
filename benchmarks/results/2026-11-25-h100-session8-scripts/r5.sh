#!/usr/bin/env bash
# Session 8, run 5: F16 / Q8_0 on the k-64 tile with touches (plan change), checked and A/B'd against base =
# main 98d6d3a (the same kernels as 1266380); the persistent decode kernel's workgroup width (384 vs 512).
# Predictions: 1B f16 TTFT -4% (only gate/up 8192x2048 changes tile: 176 -> 153 us isolated); 8B f16 GEMMs -18%
# (q/o 173 -> 145, gate/up 650 -> 544, down 607 -> 462 us isolated), TTFT ~-12%. Decode 1B WG 384: +4.7% (run 4).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsbase && tar -C /tmp/bsbase -xJf .dev/s8b/base-bins.tar.xz && ln -sf /tmp/bs/bundle/lib /tmp/bsbase/bundle/lib
NEW=$BS; OLD=/tmp/bsbase/bundle/run; t0=$(date +%s)
timeout 200 $NEW test_coopmat > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ') $(( $(date +%s) - t0 )) s"
grep -E 'Failure|Which|actual' $OUT/test_coopmat.txt | head -8
pf() { env $3 timeout 120 $1 blueshift bench --model /tmp/$2 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/p.json 2>/tmp/p.err \
  && python3 -c "
import json; d=json.load(open('/tmp/p.json'))
print('prefill %-6s %-4s %-24s %8.1f tok/s TTFT %.2f ms' % ('$2', '$4', '$3', d['prefill_tok_s'], d.get('ttft_ms', 0)))" \
  || echo "prefill $2 $4 $3 failed: $(tail -2 /tmp/p.err)"; }
dec() { env $2 timeout 90 $BS blueshift bench --model /tmp/$1 --prompt-tokens 16 --gen-tokens 128 --reps 5 --json > /tmp/d.json 2>/tmp/d.err \
  && python3 -c "
import json; d=json.load(open('/tmp/d.json'))
print('decode %-6s %-34s %7.1f tok/s' % ('$1', '$2', d['decode_tok_s']))" || echo "decode $1 $2 failed: $(tail -2 /tmp/d.err)"; }
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range(300)))")
cmpl() { $OLD blueshift logits --model /tmp/$1 --tokens $T --out /tmp/old.npy >/dev/null 2>&1
  $NEW blueshift logits --model /tmp/$1 --tokens $T --out /tmp/new.npy >/dev/null 2>&1
  python3 .dev/s8/cmp.py /tmp/new.npy /tmp/old.npy; rm -f /tmp/*.npy; }
$NEW blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$NEW blueshift convert /tmp/hf /tmp/m1f --quant f16 >/dev/null 2>&1
$NEW blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
echo "1B ready $(( $(date +%s) - t0 )) s; $(python3 -c "import json; print(json.load(open('/tmp/m1f/manifest.json')).get('quantization', '?'))" 2>/dev/null)"
$NEW blueshift bench --model /tmp/m1f --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1; $OLD blueshift bench --model /tmp/m1f --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1
for r in 1 2; do pf $OLD m1f X=0 old; pf $NEW m1f X=0 new; done
cmpl m1f
for r in 1 2; do for e in X=0 BLUESHIFT_PERSISTENT_WG=384 BLUESHIFT_PERSISTENT_WG=320 BLUESHIFT_PERSISTENT_WG=448; do dec m1q $e; done; done
$NEW blueshift logits --model /tmp/m1q --tokens $(echo $T | cut -d, -f1-100) --step --out /tmp/a.npy >/dev/null 2>&1
BLUESHIFT_PERSISTENT_WG=384 $NEW blueshift logits --model /tmp/m1q --tokens $(echo $T | cut -d, -f1-100) --step --out /tmp/b.npy >/dev/null 2>&1
BLUESHIFT_NO_PERSISTENT=1 $NEW blueshift logits --model /tmp/m1q --tokens $(echo $T | cut -d, -f1-100) --step --out /tmp/c.npy >/dev/null 2>&1
python3 .dev/s8/cmp.py /tmp/b.npy /tmp/c.npy; python3 .dev/s8/cmp.py /tmp/a.npy /tmp/c.npy; rm -f /tmp/*.npy
rm -rf /tmp/m1f /tmp/m1q
echo "1B done $(( $(date +%s) - t0 )) s"
$NEW blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$NEW blueshift convert /tmp/hf /tmp/m8f --quant f16 >/dev/null 2>&1
rm -rf /tmp/hf
echo "8B f16 ready $(( $(date +%s) - t0 )) s"
$NEW blueshift bench --model /tmp/m8f --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1; $OLD blueshift bench --model /tmp/m8f --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1
for r in 1 2; do pf $OLD m8f X=0 old; pf $NEW m8f X=0 new; done
cmpl m8f
echo "all done $(( $(date +%s) - t0 )) s"
