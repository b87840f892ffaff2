#!/usr/bin/env bash
# P4: tensor-core prefill attention (attention_cm): kernel tests, HF parity, cm vs tiled logits on the 1B, prefill A/B, profiles.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
echo "== kernel tests"
$BS test_gpu --gtest_filter='*Attention*' 2>&1 | grep -E "OK|FAILED|PASSED|SKIPPED|Failure|Expected|nmse" | head -20
echo "== parity"
python3 $SHARED/tools/make_refs.py /tmp/refs llama-tiny,qwen3-tiny,gemma3-tiny > $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
python3 $SHARED/tools/make_refs_2026.py /tmp/refs gemma2-tiny,qwen35-tiny >> $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
timeout 200 python3 benchmarks/parity_check.py "$BS" /tmp/refs 2>&1 | tee $OUT/parity.txt
mk() { local cfg=$1 q=$2; local d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
t0=$(date +%s); mk benchmarks/configs/llama-3.2-1b.json q4_k_m; mk benchmarks/configs/llama-3.1-8b.json q4_k_m; echo "made in $(( $(date +%s) - t0 )) s"
echo "== cm vs tiled logits (prefill of 300 tokens)"
T=$(python3 -c "import random; random.seed(3); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do
  $BS blueshift logits --model $d --tokens $T --out /tmp/cm.npy >/dev/null 2>&1
  BLUESHIFT_NO_CM_ATTENTION=1 $BS blueshift logits --model $d --tokens $T --out /tmp/tl.npy >/dev/null 2>&1
  $BS blueshift logits --model $d --tokens $T --out /tmp/st.npy --step >/dev/null 2>&1
  python3 -c "
import numpy as np; a=np.load('/tmp/cm.npy'); b=np.load('/tmp/tl.npy'); s=np.load('/tmp/st.npy')
r=lambda x,y:(np.linalg.norm(x-y,axis=1)/np.linalg.norm(y,axis=1))
print('$(basename $d)', 'cm vs tiled worst %.2e median %.2e top1 %d/%d' % (r(a,b).max(), np.median(r(a,b)), (a.argmax(1)==b.argmax(1)).sum(), len(a)), '| tiled vs step worst %.2e, cm vs step worst %.2e' % (r(b,s).max(), r(a,s).max()))"
done
echo "== prefill A/B (512 + 16, 5 reps): tiled = BLUESHIFT_NO_CM_ATTENTION=1"
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do
  for r in 1 2; do for v in tiled cm; do E=""; [ $v = tiled ] && E="BLUESHIFT_NO_CM_ATTENTION=1"
    env $E timeout 120 $BS blueshift bench --model $d --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > $OUT/$(basename $d).$v.$r.json 2>/dev/null
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:32s} prefill {d['prefill_tok_s']:8.0f} tok/s  TTFT {d['ttft_ms']:7.2f} ms  decode {d['decode_tok_s']:6.1f}\")" $OUT/$(basename $d).$v.$r.json "$(basename $d) $v"
  done; done
done
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do
  for v in tiled cm; do E=""; [ $v = tiled ] && E="BLUESHIFT_NO_CM_ATTENTION=1"
  env $E timeout 90 $BS bs_prefill_profile $d --reps 5 > $OUT/profile-$(basename $d)-$v.txt 2>&1; echo "$(basename $d) $v: $(head -1 $OUT/profile-$(basename $d)-$v.txt | sed 's/.*profiled/profiled/') attention $(grep -m1 '^  attention' $OUT/profile-$(basename $d)-$v.txt)"
  done
done
