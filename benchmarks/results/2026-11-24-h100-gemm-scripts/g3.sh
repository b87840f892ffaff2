#!/usr/bin/env bash
# G3: single-buffered large tiles in isolation, then 1B/8B prefill with the f16 GEMM input, base vs new alternating.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/o /tmp/base && tar -C /tmp/base -xJf .dev/gemm/base.tar.xz; B0=/tmp/base/bundle/run
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
echo "== GEMM in isolation (X f16 in the registry kernels; candidates from .dev/gemm/spv)"
timeout 300 $BS bs_gemv_bench --matmul 512 --dtype q4k,q6k,f16 \
  --shape 512x2048,2048x2048,8192x2048,2048x8192,1024x4096,4096x4096,14336x4096,4096x14336 \
  --reps 20 --rounds 3 --cm-spv .dev/gemm/spv 2>&1 | grep -v "^#" > $OUT/g3-gemm.txt
grep -v " matmul  " $OUT/g3-gemm.txt | grep -v "nostage\|nofetch" | awk '{printf "%-4s %-11s %-12s %-9s %8s %8s %s\n",$1,$2,$4,$5,$6,$8,$13}' | grep -v "64x128 " | grep -v '^f16' | head -90
echo "== prefill A/B (512-token prompt, 16 generated, 5 reps): base = 044039a, new = this tree"
mk() { local cfg=$1 q=$2; local d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
ab() { local d=$1
  for r in 1 2; do for v in base new; do R=$BS; [ $v = base ] && R=$B0
    timeout 120 $R blueshift bench --model $d --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/o/$(basename $d).$v.$r.json 2>/dev/null
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:32s} prefill {d['prefill_tok_s']:8.0f} tok/s  TTFT {d['ttft_ms']:7.2f} ms  decode {d['decode_tok_s']:6.1f}\")" /tmp/o/$(basename $d).$v.$r.json "$(basename $d) $v"
  done; done; }
t0=$(date +%s); mk benchmarks/configs/llama-3.2-1b.json q4_k_m; mk benchmarks/configs/llama-3.2-1b.json f16; echo "1B made in $(( $(date +%s) - t0 )) s"
ab /tmp/m/llama-3.2-1b.q4_k_m; ab /tmp/m/llama-3.2-1b.f16
t0=$(date +%s); mk benchmarks/configs/llama-3.1-8b.json q4_k_m; echo "8B made in $(( $(date +%s) - t0 )) s"
ab /tmp/m/llama-3.1-8b.q4_k_m
echo "== profile of the new 1B q4_k_m prefill"
timeout 60 $BS bs_prefill_profile /tmp/m/llama-3.2-1b.q4_k_m 2>&1 | tail -22 > $OUT/profile-1b.txt; cat $OUT/profile-1b.txt | head -22
tar -C /tmp -cJf $OUT/ab.tar.xz o
