#!/usr/bin/env bash
# P7: RMSNorm and the gated activation write the tensor-core GEMMs' f16 input themselves (no to_f16 pass):
# parity, logits identical to BLUESHIFT_NO_F16_PRODUCERS=1, prefill A/B, profiles.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
$BS test_gpu --gtest_filter='*Attention*' 2>&1 | grep -E "PASSED|FAILED" | head -3
echo "== parity"
python3 $SHARED/tools/make_refs.py /tmp/refs llama-tiny,qwen3-tiny,gemma3-tiny > $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
python3 $SHARED/tools/make_refs_2026.py /tmp/refs gemma2-tiny,phi3-tiny,lfm2-tiny,qwen35-tiny >> $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
timeout 200 python3 benchmarks/parity_check.py "$BS" /tmp/refs 2>&1 | tee $OUT/parity.txt
mk() { local cfg=$1 q=$2; local d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
t0=$(date +%s); mk benchmarks/configs/llama-3.2-1b.json q4_k_m; mk benchmarks/configs/llama-3.1-8b.json q4_k_m; mk benchmarks/configs/llama-3.2-1b.json f16; echo "made in $(( $(date +%s) - t0 )) s"
T=$(python3 -c "import random; random.seed(3); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m /tmp/m/llama-3.2-1b.f16; do
  $BS blueshift logits --model $d --tokens $T --out /tmp/a.npy >/dev/null 2>&1
  BLUESHIFT_NO_F16_PRODUCERS=1 $BS blueshift logits --model $d --tokens $T --out /tmp/b.npy >/dev/null 2>&1
  python3 -c "import numpy as np; a=np.load('/tmp/a.npy'); b=np.load('/tmp/b.npy'); print('$(basename $d) logits identical:', np.array_equal(a,b), 'max abs diff', float(np.abs(a-b).max()))"
done
echo "== prefill A/B (512 + 16, 5 reps): base = BLUESHIFT_NO_F16_PRODUCERS=1"
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m /tmp/m/llama-3.2-1b.f16; do
  for r in 1 2; do for v in base new; do E=""; [ $v = base ] && E="BLUESHIFT_NO_F16_PRODUCERS=1"
    env $E timeout 120 $BS blueshift bench --model $d --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > $OUT/$(basename $d).$v.$r.json 2>/dev/null
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:32s} prefill {d['prefill_tok_s']:8.0f} tok/s  TTFT {d['ttft_ms']:7.2f} ms  decode {d['decode_tok_s']:6.1f}\")" $OUT/$(basename $d).$v.$r.json "$(basename $d) $v"
  done; done
done
for v in base new; do E=""; [ $v = base ] && E="BLUESHIFT_NO_F16_PRODUCERS=1"
  env $E timeout 60 $BS bs_prefill_profile /tmp/m/llama-3.1-8b.q4_k_m --reps 5 > $OUT/profile-8b-$v.txt 2>&1; echo "8B $v: $(head -1 $OUT/profile-8b-$v.txt | sed 's/.*profiled/profiled/')"; grep -E "^  (to_f16|rms_norm|gated_act|attention)" $OUT/profile-8b-$v.txt
done
