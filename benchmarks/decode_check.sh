#!/usr/bin/env bash
# Decode-path check after a kernel change, in one command on the lease machine:
#   benchmarks/decode_check.sh RUNNER OUT_DIR [config] [quant]
# 1. parity of prefill and decode against HF on the shared tiny models (when $SHARED is set);
# 2. a synth model (default Llama-3.2-1B shapes, q4_k_m): teacher-forced logits over 600 positions
#    through the decode kernels (--step) against the prefill kernels (different attention and matvec
#    code), worst relative L2 and top-1 agreement;
# 3. `bench` with the default matvec workgroup rule and with the old fixed size (BLUESHIFT_MATVEC_WG=128).
set -euo pipefail
runner=$1; out=$2; cfg=${3:-llama-3.2-1b}; quant=${4:-q4_k_m}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_WORK:-/tmp/bs-decode}
rm -rf "$work"; mkdir -p "$work" "$out"
log=$out/decode_check.txt
[ -n "${SHARED:-}" ] && [ -d "$SHARED/data/models" ] && python3 "$here/parity_check.py" "$runner" "$SHARED/data/models" | tee -a "$log"
. "$here/ab_common.sh"
ab_model "$runner" "$here/configs/$cfg.json" "$quant" "$work"
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(600)))")
"$runner" blueshift logits --model "$work/m" --tokens "$toks" --out "$work/prefill.npy" >/dev/null
"$runner" blueshift logits --model "$work/m" --tokens "$toks" --out "$work/step.npy" --step >/dev/null
python3 "$here/logits_diff.py" "$work/prefill.npy" "$work/step.npy" | tee -a "$log"
for wg in default 128; do
  if [ $wg = default ]; then env=(); else env=(BLUESHIFT_MATVEC_WG=$wg); fi
  env "${env[@]}" "$runner" blueshift bench --model "$work/m" --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
    > "$out/bench-$cfg-$quant-wg$wg.json"
  python3 - "$out/bench-$cfg-$quant-wg$wg.json" "$wg" <<'PY' | tee -a "$log"
import json, sys
d = json.load(open(sys.argv[1]))
print(f"matvec wg {sys.argv[2]}: decode {d['decode_tok_s']:.1f} tok/s, prefill {d['prefill_tok_s']:.0f} tok/s, "
      f"ttft {d['ttft_ms']:.1f} ms, {d['dispatches_per_token']} dispatches, {d['barriers_per_token']} barriers, "
      f"{d['achieved_gb_s']:.0f} GB/s ({d['pct_of_peak']:.1f}% of {d['peak_gb_s']:.0f}); by kernel {d['gpu_ms_by_kernel']}")
a = d["token_arrival_ms"]
print("  token arrivals (ms):", [round(x, 1) for x in a[:3]], "...", [round(x, 1) for x in a[15:19]], "...", [round(x, 1) for x in a[-3:]])
PY
done
rm -rf "$work"
