#!/usr/bin/env bash
# Session 4, device run 8: tiled attention with the softmax on all lanes — test, prefill A/B, profile.
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run8.txt
{
(cd /tmp/bs/bundle && timeout 60 ./run test_gpu --gtest_filter='KernelsModel.Tiled*' 2>&1 | grep -E "OK|FAILED|PASSED")
w=/tmp/p8; mkdir -p $w
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json $w/hf --seed 1 >/dev/null
$BS blueshift convert $w/hf $w/m --quant q4_k_m >/dev/null; rm -rf $w/hf
$BS blueshift bench --model $w/m --prompt-tokens 64 --gen-tokens 16 --reps 1 --json >/dev/null
for v in tiled:BLUESHIFT_NO_TILED_ATTENTION=0 old:BLUESHIFT_NO_TILED_ATTENTION=1 tiled2:BLUESHIFT_NO_TILED_ATTENTION=0; do
  env ${v#*:} $BS blueshift bench --model $w/m --prompt-tokens 512 --gen-tokens 16 --reps 5 --json | python3 -c "
import json,sys; d=json.load(sys.stdin); print('${v%%:*}: prefill %.0f tok/s, ttft %.2f ms, decode %.1f tok/s' % (d['prefill_tok_s'], d['ttft_ms'], d['decode_tok_s']))"
done
timeout 60 $BS bs_prefill_profile $w/m --tokens 512 --reps 5 2>&1 | head -9
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(600)))")
BLUESHIFT_NO_COOPMAT=1 timeout 40 $BS blueshift logits --model $w/m --tokens "$toks" --out $w/p.npy >/dev/null
timeout 40 $BS blueshift logits --model $w/m --tokens "$toks" --out $w/s.npy --step >/dev/null
python3 -c "
import numpy as np; a=np.load('$w/p.npy'); b=np.load('$w/s.npy')
r=np.linalg.norm(a-b,axis=1)/np.linalg.norm(a,axis=1)
print(f'{a.shape[0]} positions, tiled-attention scalar prefill vs decode kernels: worst rel L2 {r.max():.2e}, median {np.median(r):.2e}, top-1 {100*(a.argmax(1)==b.argmax(1)).mean():.1f}%')"
} 2>&1 | tee $L
