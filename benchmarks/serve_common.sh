#!/usr/bin/env bash
# Sourced by the serve_*.sh device scripts, from the repository root: the lease setup ($BS), OUT, the GPU's line
# (OUT/gpu.txt), t0, and
#   serve_model                     the Llama-3.2-1B-shaped q4_k_m they all measure (builtin tokenizer) in /tmp/m1;
#   bench NAME GEN REPS [ARGS...]   bench --json on it with 128-token prompts (environment from the caller):
#                                   OUT/bench-NAME.json, or a line saying why not.
# Their summaries print with benchmarks/serve_summary.py.
. benchmarks/lease_setup.sh >/dev/null 2>&1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
t0=$(date +%s)

serve_model() {
  $BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf1 --seed 1 --tokenizer builtin >/dev/null
  $BS blueshift convert /tmp/hf1 /tmp/m1 --quant q4_k_m >/dev/null; rm -rf /tmp/hf1
  echo "synth + convert $(( $(date +%s) - t0 )) s"
}

bench() {
  local name=$1 gen=$2 reps=$3; shift 3
  timeout 90 $BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens "$gen" --reps "$reps" --json "$@" \
    > "$OUT/bench-$name.json" 2> "$OUT/bench-$name.err" || { echo "bench $name failed"; tail -3 "$OUT/bench-$name.err"; }
}
