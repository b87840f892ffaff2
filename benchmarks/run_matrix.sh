#!/usr/bin/env bash
# The decode benchmark matrix, in one command on the lease machine:
#   benchmarks/run_matrix.sh RUNNER OUT_DIR [model ...]
# RUNNER runs a bundled program ("$BS" from benchmarks/lease_setup.sh, or "env" with blueshift on PATH).
# For each config in benchmarks/configs/ (published shapes): synth a random-weight checkpoint, convert
# it to q4_k_m and f16, run `blueshift bench --json` (512-token prompt, 128 generated, medians of 5),
# and write OUT_DIR/matrix.json plus a markdown table (and a PNG chart when matplotlib is present).
set -euo pipefail
runner=$1; out=$2; shift 2
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(llama-3.2-1b qwen2.5-1.5b gemma-3-1b llama-3.2-3b llama-3.1-8b)
here=$(cd "$(dirname "$0")" && pwd)
work=${BENCH_WORK:-/tmp/bs-matrix}
mkdir -p "$out" "$work"
for m in "${models[@]}"; do
  rm -rf "$work/$m"
  "$runner" blueshift synth --config "$here/configs/$m.json" "$work/$m/hf" --seed 1 > "$out/$m.synth.txt"
  for q in q4_k_m f16; do
    "$runner" blueshift convert "$work/$m/hf" "$work/$m/$q" --quant $q > "$out/$m.$q.convert.txt"
  done
  rm -rf "$work/$m/hf"
  for q in q4_k_m f16; do
    "$runner" blueshift bench --model "$work/$m/$q" --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
      > "$out/$m.$q.json" 2> "$out/$m.$q.err" || echo "bench failed: $m $q (see $out/$m.$q.err)"
  done
  rm -rf "$work/$m"
done
python3 "$here/matrix_report.py" "$out"
