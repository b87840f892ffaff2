#!/usr/bin/env bash
# A/B of decode settings on one synth model, in one command on the lease machine:
#   benchmarks/decode_ab.sh RUNNER OUT_DIR config quant [NAME[@RUNNER2]:VAR=VAL,VAR=VAL ...]
# Synthesizes and converts the config's checkpoint once, then runs `bench --json` (512-token prompt,
# 128 tokens, 5 reps) for each variant (NAME:ENV; "base" with no settings always runs first, and once
# more last so drift shows), and prints decode tok/s, GB/s and the profiled step's top dispatches.
# NAME@RUNNER2 runs that variant through another runner (an older bundle's `run`: one tree against another).
set -euo pipefail
runner=$1; out=$2; cfg=$3; quant=$4; shift 4
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_WORK:-/tmp/bs-ab}/$cfg-$quant
rm -rf "$work"; mkdir -p "$work" "$out"
. "$here/ab_common.sh"
ab_model "$runner" "$here/configs/$cfg.json" "$quant" "$work"
"$runner" blueshift bench --model "$work/m" --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null  # clocks up
for v in base: "$@" base2:; do
  ab_variant "$runner" "$v"
  env "${ab_env[@]}" "$ab_run" blueshift bench --model "$work/m" --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
    > "$out/ab-$cfg-$quant-$ab_name.json"
  python3 - "$out/ab-$cfg-$quant-$ab_name.json" "$cfg $quant $ab_name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = d["gpu_ms_by_kernel"]
print(f"{sys.argv[2]:32s} decode {d['decode_tok_s']:7.1f} tok/s ({1000 / d['decode_tok_s']:.3f} ms) "
      f"{d['achieved_gb_s']:5.0f} GB/s, prefill {d['prefill_tok_s']:6.0f} tok/s, ttft {d['ttft_ms']:5.1f} ms, "
      f"{d['dispatches_per_token']} disp {d['barriers_per_token']} barriers | profiled step {sum(k.values()):.3f} ms: "
      + ", ".join(f"{n} {v:.3f}" for n, v in sorted(k.items(), key=lambda t: -t[1])))
PY
done
rm -rf "$work"
