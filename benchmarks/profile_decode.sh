#!/usr/bin/env bash
# Where one decode step's GPU time goes, per dispatch label (dtype and shape for weight kernels):
#   benchmarks/profile_decode.sh RUNNER OUT_DIR config [quant] [gen_tokens]
# synthesizes the config's full-size checkpoint, converts it, runs `bench --json` (512-token prompt)
# and prints decode tok/s, the per-kernel-class times and the per-label table, largest first. The
# profile is one decode step with a timestamp (and so a barrier) after every dispatch.
set -euo pipefail
runner=$1; out=$2; cfg=$3; quant=${4:-q4_k_m}; gen=${5:-128}
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_WORK:-/tmp/bs-profile}/$cfg
rm -rf "$work"; mkdir -p "$work" "$out"
. "$here/ab_common.sh"
ab_model "$runner" "$here/configs/$cfg.json" "$quant" "$work"
"$runner" blueshift bench --model "$work/m" --prompt-tokens 512 --gen-tokens "$gen" --reps 3 --json > "$out/profile-$cfg-$quant.json"
python3 - "$out/profile-$cfg-$quant.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{d['model'].split('/')[-2] if '/' in d['model'] else d['model']} {d['quant']}: decode {d['decode_tok_s']:.1f} tok/s "
      f"({1000 / d['decode_tok_s']:.3f} ms), {d['achieved_gb_s']:.0f} GB/s, prefill {d['prefill_tok_s']:.0f} tok/s, "
      f"ttft {d['ttft_ms']:.1f} ms, {d['dispatches_per_token']} dispatches, {d['barriers_per_token']} barriers")
k = d["gpu_ms_by_kernel"]
print("  by kernel (profiled step, ms):", ", ".join(f"{n} {v:.3f}" for n, v in sorted(k.items(), key=lambda t: -t[1])),
      f"= {sum(k.values()):.3f}")
for n, v in sorted(d["gpu_ms_by_dispatch"].items(), key=lambda t: -t[1])[:16]:
    print(f"  {n:40s} {v:8.3f} ms")
PY
rm -rf "$work"
