#!/usr/bin/env bash
# G2: f16 GEMM input (to_f16 once per input, matmul_cm reads f16 X). Correctness on the H100 (coopmat and
# kernel tests, HF parity), the new tile candidates in isolation, then 1B/8B prefill base vs new alternating.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/base && tar -C /tmp/base -xJf .dev/gemm/base.tar.xz; B0=/tmp/base/bundle/run
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
echo "== tests on the H100"
$BS test_coopmat 2>&1 | grep -E "OK|FAILED|PASSED|error|Failure" | tail -12
$BS test_kernels --gtest_filter='Matmul*:Matvec*' 2>&1 | grep -E "FAILED|PASSED|Failure" | tail -4
echo "== parity"
python3 $SHARED/tools/make_refs.py /tmp/refs llama-tiny,qwen3-tiny,gemma3-tiny > $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
python3 $SHARED/tools/make_refs_2026.py /tmp/refs phi3-tiny,gemma2-tiny,lfm2-tiny,qwen35-tiny >> $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
timeout 200 python3 benchmarks/parity_check.py "$BS" /tmp/refs 2>&1 | tee $OUT/parity.txt
echo "== GEMM in isolation (X f16 in the registry kernels; candidates from .dev/gemm/spv)"
timeout 300 $BS bs_gemv_bench --matmul 512 --dtype q4k,f16,q6k \
  --shape 512x2048,2048x2048,8192x2048,2048x8192,1024x4096,4096x4096,14336x4096,4096x14336 \
  --reps 20 --rounds 3 --cm-spv .dev/gemm/spv 2>&1 | grep -v "^#" > $OUT/g2-gemm.txt
grep -v " matmul  " $OUT/g2-gemm.txt | grep -v "nostage\|nofetch" | awk '{print $1,$2,$4,$5,$6,$8,$11}' | column -t | head -130
echo "== prefill A/B (512-token prompt, 16 generated, 5 reps): base = 044039a, new = this tree"
mk() { local cfg=$1 q=$2 d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
ab() { local d=$1
  for r in 1 2; do for v in base new; do R=$BS; [ $v = base ] && R=$B0
    timeout 120 $R blueshift bench --model $d --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > $OUT/$(basename $d).$v.$r.json 2>/dev/null
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:32s} prefill {d['prefill_tok_s']:8.0f} tok/s  TTFT {d['ttft_ms']:7.2f} ms  decode {d['decode_tok_s']:6.1f}\")" $OUT/$(basename $d).$v.$r.json "$(basename $d) $v"
  done; done; }
t0=$(date +%s); mk benchmarks/configs/llama-3.2-1b.json q4_k_m; mk benchmarks/configs/llama-3.2-1b.json f16; echo "1B made in $(( $(date +%s) - t0 )) s"
ab /tmp/m/llama-3.2-1b.q4_k_m; ab /tmp/m/llama-3.2-1b.f16
t0=$(date +%s); mk benchmarks/configs/llama-3.1-8b.json q4_k_m; echo "8B made in $(( $(date +%s) - t0 )) s"
ab /tmp/m/llama-3.1-8b.q4_k_m
echo "== profile of the new 1B q4_k_m prefill"
timeout 60 $BS bs_prefill_profile /tmp/m/llama-3.2-1b.q4_k_m 2>&1 | tail -22 > $OUT/profile-1b.txt; cat $OUT/profile-1b.txt | head -22
