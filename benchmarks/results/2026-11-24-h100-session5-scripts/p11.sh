#!/usr/bin/env bash
# P11: the tiled prefill attention reduces each row's max and sum by subgroup shuffles (16-lane rows within a subgroup: two workgroup barriers fewer per tile) (new)
# vs 0946a86's binary (base): kernel test, logits vs base, prefill A/B, attention profile.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/alt && xz -dc .dev/s5/base-blueshift.xz > /tmp/alt/base && chmod +x /tmp/alt/base
LIB=/tmp/bs/bundle/lib
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
$BS test_gpu --gtest_filter='*Attention*' 2>&1 | grep -E "PASSED|FAILED" | head -3
mk() { local cfg=$1 q=$2; local d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
t0=$(date +%s); mk benchmarks/configs/llama-3.2-1b.json q4_k_m; mk benchmarks/configs/llama-3.1-8b.json q4_k_m; echo "made in $(( $(date +%s) - t0 )) s"
T=$(python3 -c "import random; random.seed(3); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do
  $BS blueshift logits --model $d --tokens $T --out /tmp/a.npy >/dev/null 2>&1
  LD_LIBRARY_PATH=$LIB /tmp/alt/base logits --model $d --tokens $T --out /tmp/b.npy >/dev/null 2>&1
  python3 -c "import numpy as np; a=np.load('/tmp/a.npy'); b=np.load('/tmp/b.npy'); r=np.linalg.norm(a-b,axis=1)/np.linalg.norm(b,axis=1); print('$(basename $d) new vs base: worst row rel L2 %.2e, top-1 %d/%d' % (r.max(), (a.argmax(1)==b.argmax(1)).sum(), len(a)))"
done
echo "== prefill A/B (512 + 16, 5 reps)"
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do
  for r in 1 2; do for v in base new; do
    if [ $v = base ]; then R="env LD_LIBRARY_PATH=$LIB /tmp/alt/base"; else R="$BS blueshift"; fi
    timeout 120 $R bench --model $d --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > $OUT/$(basename $d).$v.$r.json 2>/dev/null
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:32s} prefill {d['prefill_tok_s']:8.0f} tok/s  TTFT {d['ttft_ms']:7.2f} ms  decode {d['decode_tok_s']:6.1f}\")" $OUT/$(basename $d).$v.$r.json "$(basename $d) $v"
  done; done
done
timeout 60 $BS bs_prefill_profile /tmp/m/llama-3.1-8b.q4_k_m --reps 5 > $OUT/profile-8b.txt 2>&1; head -1 $OUT/profile-8b.txt; grep -m1 "^  attention" $OUT/profile-8b.txt
timeout 60 $BS bs_prefill_profile /tmp/m/llama-3.2-1b.q4_k_m --reps 5 > $OUT/profile-1b.txt 2>&1; head -1 $OUT/profile-1b.txt; grep -m1 "^  attention" $OUT/profile-1b.txt
