#!/usr/bin/env bash
# Session 15, run S2: the tensor-core GEMMs' f16 step sums (matmul_cm.comp F16_ACC; BLUESHIFT_GEMM_F16_ACC=0: f32
# throughout, as before): test_coopmat (both forms against float64), prefill logits and greedy ids on against off,
# HF parity of llama-tiny and phi3-tiny on and off, and TTFT / prefill A/B with the per-GEMM profile: 1B q4_k_m and
# f16, 8B q4_k_m and f16.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/t && tar -C /tmp/t -xJf .dev/s15/tests.tar.xz
echo "== test_coopmat"
LD_LIBRARY_PATH=/tmp/bs/bundle/lib timeout 240 /tmp/t/test_coopmat > /tmp/o/test_coopmat.txt 2>&1; tail -3 /tmp/o/test_coopmat.txt
grep -E "Failure|f16_acc=|Which is" /tmp/o/test_coopmat.txt | head -12
stamp "tests"
OFF=BLUESHIFT_GEMM_F16_ACC=0
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 120 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/bench-$m-$lab.json 2>/tmp/err.txt
  python3 - /tmp/o/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
print(f"{sys.argv[2]} {sys.argv[3]:6s} ttft {d['ttft_ms']:6.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% peak {d['peak_gb_s']:5.0f}")
PY
  grep -E "internal|rror" /tmp/err.txt | head -3
}
same() {  # model: prefill logits and greedy ids, on vs off
  local m=$1
  $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/l-on.npy >/dev/null 2>&1 || echo "$m logits on FAILED"
  env $OFF $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/l-off.npy >/dev/null 2>&1 || echo "$m logits off FAILED"
  echo -n "$m prefill logits (300 rows), f16 step sums vs f32: "; python3 .dev/s15/cmp.py /tmp/l-on.npy /tmp/l-off.npy
  $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 64 > /tmp/i-on.txt 2>/dev/null
  env $OFF $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 64 > /tmp/i-off.txt 2>/dev/null
  cmp -s /tmp/i-on.txt /tmp/i-off.txt && echo "$m greedy ids (64 after 300): same" || { echo "$m greedy ids DIFFER"; python3 -c "
a=open('/tmp/i-on.txt').read().split(','); b=open('/tmp/i-off.txt').read().split(',')
n=next((i for i,(x,y) in enumerate(zip(a,b)) if x!=y), None); print('  first difference at id', n, 'of', len(a))"; }
}
prof() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS bs_prefill_profile /tmp/$m --tokens 512 --reps 3 --warm 30 > /tmp/o/profile-$m-$lab.txt 2>&1
  echo "profile $m $lab:"; head -14 /tmp/o/profile-$m-$lab.txt
}
echo "== HF parity, f16 step sums"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -8
echo "== HF parity, f32"; env $OFF python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -8
stamp "parity"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
for m in m1q m1f; do same $m; for i in 1 2; do bench $m on-$i; bench $m off-$i $OFF; done; prof $m on; prof $m off $OFF; done
stamp "1B"
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1
stamp "8B q4 model"
same m8q; for i in 1 2; do bench m8q on-$i; bench m8q off-$i $OFF; done; prof m8q on; prof m8q off $OFF
rm -rf /tmp/m8q
stamp "8B q4"
if [ $(( $(date +%s) - t0 )) -lt 420 ]; then
  $BS blueshift convert /tmp/h8 /tmp/m8f --quant f16 >/dev/null 2>&1
  stamp "8B f16 model"
  bench m8f on-1; bench m8f off-1 $OFF; prof m8f on
fi
stamp "8B f16"
tar -C /tmp -cJf $OUT/s2.tar.xz o
stamp "all done"
