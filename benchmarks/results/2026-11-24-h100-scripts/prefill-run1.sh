#!/usr/bin/env bash
# prefill lever A/B on the H100: base = main's build, new = branch prefill (2-deep register prefetch in matmul_cm).
set -uo pipefail
for f in .gl/*.deb; do dpkg -x $f / >/dev/null; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json BLUESHIFT_VALIDATION=0
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
mkdir -p /tmp/base /tmp/new
tar -C /tmp/base -xJf .dev/prefill/base.tar.xz; tar -C /tmp/new -xJf .dev/prefill/bundle.tar.xz
B=/tmp/base/bundle/run; N=/tmp/new/bundle/run
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== test_coopmat (new)"; timeout 120 $N test_coopmat 2>&1 | tail -12
echo "== test_coopmat (base)"; timeout 120 $B test_coopmat 2>&1 | tail -3
echo "== GEMM in isolation (M=512)"
for v in base new; do R=$B; [ $v = new ] && R=$N
  timeout 100 $R bs_gemv_bench --matmul 512 --dtype q4k,f16 --shape 2048x2048,512x2048,8192x2048,2048x8192 --reps 20 --rounds 3 2>&1 | grep -v "^#" | sed "s/^/[$v] /" | tail -30
done
bench() {  # model label
  for v in base new base new; do R=$B; [ $v = new ] && R=$N
    timeout 60 $R blueshift bench --model $1 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/b.json 2>/tmp/b.err \
      && python3 -c "import json; d=json.load(open('/tmp/b.json')); print('$2 $v prefill_tok_s %.0f ttft_ms %.2f decode %.1f' % (d['prefill_tok_s'], d['ttft_ms'], d['decode_tok_s']))" \
      || { echo "$2 $v FAILED"; tail -3 /tmp/b.err; }
  done
}
for q in q4_k_m f16; do
  $N blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf1 --seed 1 >/dev/null
  $N blueshift convert /tmp/hf1 /tmp/m1$q --quant $q >/dev/null; rm -rf /tmp/hf1
  $N blueshift bench --model /tmp/m1$q --prompt-tokens 512 --gen-tokens 16 --reps 2 --json >/dev/null 2>&1  # warm clocks
  bench /tmp/m1$q "1B-$q"
done
for v in base new; do R=$B; [ $v = new ] && R=$N
  timeout 40 $R bs_prefill_profile /tmp/m1q4_k_m --tokens 512 --reps 5 2>&1 | sed "s/^/[$v prof] /" | head -16
done
if [ "${SKIP_8B:-0}" = 0 ]; then
  t0=$(date +%s)
  $N blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf8 --seed 1 >/dev/null
  $N blueshift convert /tmp/hf8 /tmp/m8 --quant q4_k_m >/dev/null; rm -rf /tmp/hf8
  echo "8B synth+convert $(( $(date +%s) - t0 )) s"
  $N blueshift bench --model /tmp/m8 --prompt-tokens 512 --gen-tokens 16 --reps 2 --json >/dev/null 2>&1
  bench /tmp/m8 "8B-q4_k_m"
fi
