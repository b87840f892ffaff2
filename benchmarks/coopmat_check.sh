#!/usr/bin/env bash
# Tensor-core prefill check in one command on the lease machine (after the loader setup of
# lease_setup.sh): benchmarks/coopmat_check.sh RUNNER OUT_DIR [config] [quant]
# 1. what the device offers (vulkaninfo cooperative-matrix lines, `blueshift devices --json`);
# 2. test_coopmat (the kernels against the CPU reference) when the bundle has it;
# 3. bs_gemv_bench --matmul 512: scalar matmul vs matmul_cm in each tile, Llama-3.2-1B shapes (SKIP_GEMV=1
#    leaves it out; CM_SPV=DIR adds tuning builds, see gemv_bench --cm-spv);
# 4. a synth model (default Llama-3.2-1B, q4_k_m): bench and a per-kernel prefill profile with and
#    without BLUESHIFT_NO_COOPMAT=1, and prefill logits over 600 positions both ways (worst relative L2,
#    top-1 agreement).
set -uo pipefail
runner=$1; out=$2; cfg=${3:-llama-3.2-1b}; quant=${4:-q4_k_m}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_WORK:-/tmp/bs-coopmat}
rm -rf "$work"; mkdir -p "$work" "$out"
log=$out/coopmat_check.txt
{ command -v vulkaninfo >/dev/null && vulkaninfo 2>/dev/null | grep -i -E "cooperative_matrix|deviceName" | sort -u; } > "$out/vulkaninfo.txt"
cat "$out/vulkaninfo.txt" | tee -a "$log"
"$runner" blueshift devices --json > "$out/devices.json"; grep -E "name|coop|tensor" "$out/devices.json" | tee -a "$log"
bindir=$(dirname "$runner")/bin
[ -x "$bindir/test_coopmat" ] && timeout 120 "$runner" test_coopmat 2>&1 | tail -25 | tee -a "$log"
if [ "${SKIP_GEMV:-0}" = 0 ]; then
spv=(); [ -n "${CM_SPV:-}" ] && spv=(--cm-spv "$CM_SPV")  # tuning builds, see gemv_bench --cm-spv
timeout 150 "$runner" bs_gemv_bench --matmul 512 --dtype q4k,q6k,q8_0,f16 --shape 2048x2048,512x2048,8192x2048,2048x8192 \
  --reps 20 --rounds 3 "${spv[@]}" 2>&1 | tee -a "$log"
fi
. "$here/ab_common.sh"
ab_model "$runner" "$here/configs/$cfg.json" "$quant" "$work"
# A discarded run first: the GPU comes out of idle clocks (the first bench after the CPU-bound convert
# measured 35-50% slow prefill twice).
"$runner" blueshift bench --model "$work/m" --prompt-tokens 512 --gen-tokens 16 --reps 3 --json > /dev/null
for mode in coopmat scalar; do
  if [ $mode = scalar ]; then export BLUESHIFT_NO_COOPMAT=1; else unset BLUESHIFT_NO_COOPMAT; fi
  "$runner" blueshift bench --model "$work/m" --prompt-tokens 512 --gen-tokens 16 --reps 3 --json > "$out/bench-$mode.json"
  python3 - "$out/bench-$mode.json" $mode <<'PY' | tee -a "$log"
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: prefill {d['prefill_tok_s']:.0f} tok/s, ttft {d['ttft_ms']:.2f} ms, decode {d['decode_tok_s']:.1f} tok/s")
PY
  "$runner" bs_prefill_profile "$work/m" --tokens 512 --reps 5 2>&1 | sed "s/^/[$mode] /" | head -40 | tee -a "$log"
done
unset BLUESHIFT_NO_COOPMAT
for tile in 64x64 64x128 128x128; do
  BLUESHIFT_MATMUL_TILE=$tile "$runner" blueshift bench --model "$work/m" --prompt-tokens 512 --gen-tokens 16 --reps 3 --json \
    | python3 -c "import json,sys; d=json.load(sys.stdin); print('tile $tile: prefill %.0f tok/s, ttft %.2f ms' % (d['prefill_tok_s'], d['ttft_ms']))" | tee -a "$log"
done
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(600)))")
"$runner" blueshift logits --model "$work/m" --tokens "$toks" --out "$work/cm.npy" >/dev/null
BLUESHIFT_NO_COOPMAT=1 "$runner" blueshift logits --model "$work/m" --tokens "$toks" --out "$work/scalar.npy" >/dev/null
python3 "$here/logits_diff.py" "$work/scalar.npy" "$work/cm.npy" --what "tensor-core vs scalar prefill" --flips \
  | tee -a "$log"
rm -rf "$work"
