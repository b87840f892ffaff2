#!/usr/bin/env bash
# P1: where the 8B / 1B prefill and decode spend their time (labels), and the GEMM per shape in isolation.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
mk() { local cfg=$1 q=$2; local d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
t0=$(date +%s); mk benchmarks/configs/llama-3.2-1b.json q4_k_m; mk benchmarks/configs/llama-3.1-8b.json q4_k_m; echo "made in $(( $(date +%s) - t0 )) s"
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do n=$(basename $d)
  timeout 90 $BS bs_prefill_profile $d --reps 3 > $OUT/prefill-$n.txt 2>&1; head -12 $OUT/prefill-$n.txt
  grep -E "^    " $OUT/prefill-$n.txt | sort -k2 -t'm' | head -0
  timeout 120 $BS blueshift bench --model $d --prompt-tokens 512 --gen-tokens 128 --reps 3 --json > $OUT/bench-$n.json 2>/dev/null
  python3 - $OUT/bench-$n.json <<'PY'
import json,sys; d=json.load(open(sys.argv[1]))
print(f"prefill {d['prefill_tok_s']:.0f} tok/s TTFT {d['ttft_ms']:.2f} decode {d['decode_tok_s']:.1f} peak {d['peak_gb_s']:.0f} pct {d['pct_of_peak']:.1f} disp {d['dispatches_per_token']} barr {d['barriers_per_token']}")
for k in ('gpu_ms_by_kernel','gpu_ms_by_dispatch'):
  if k in d: print(k, json.dumps(d[k])[:1500])
PY
done
timeout 200 $BS bs_gemv_bench --matmul 512 --dtype q4k,q6k,f16 \
  --shape 512x2048,2048x2048,8192x2048,2048x8192,1024x4096,4096x4096,14336x4096,4096x14336 \
  --reps 20 --rounds 3 2>&1 | grep -v "^#" > $OUT/gemm.txt; head -40 $OUT/gemm.txt
