#!/usr/bin/env bash
# H100 run A (session 3, 2026-11-24): the 2026 families at HF parity (tiny references made here with
# make_refs_2026.py), then bench rows on `synth --like` bundles of DOPPLER's manifests.
#   benchmarks/results/2026-11-24-h100-families-scripts/run-a.sh   (carry .gl .dev/carry; writes $OUT)
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
echo "== parity (HF float32 logits made on this machine)"
t0=$(date +%s)
python3 $SHARED/tools/make_refs_2026.py /tmp/refs gemma4-tiny,gemma4e-tiny,qwen35-tiny,lfm2-tiny,gemma2-tiny,phi3-tiny \
  > "$OUT/make_refs.txt" 2>&1 || tail -5 "$OUT/make_refs.txt"
echo "refs made in $(( $(date +%s) - t0 )) s"
timeout 240 python3 benchmarks/parity_check.py "$BS" /tmp/refs 2>&1 | tee "$OUT/parity.txt"
echo "== parity without tensor-core prefill matmuls (f16 inputs): BLUESHIFT_NO_COOPMAT=1"
BLUESHIFT_NO_COOPMAT=1 timeout 120 python3 benchmarks/parity_check.py "$BS" /tmp/refs gemma4-tiny gemma4e-tiny qwen35-tiny lfm2-tiny 2>&1 \
  | grep -v greedy | tee "$OUT/parity-nocoopmat.txt"
echo "== bench rows (synth --like, 512-token prompt, 128 generated, medians of 5)"
mkdir -p /tmp/like
row() {  # manifest [bench args...]
  local name=$1; shift
  local d=/tmp/like/$name
  rm -rf "$d"; t0=$(date +%s)
  timeout 150 $BS blueshift synth --like "$SHARED/data/doppler/$name/manifest.json" "$d" --seed 1 > "$OUT/$name.synth.txt" 2>&1 \
    || { echo "$name: synth failed"; tail -3 "$OUT/$name.synth.txt"; return; }
  timeout 60 $BS blueshift verify "$d" > "$OUT/$name.verify.txt" 2>&1; local vrc=$?
  echo "$name: synth $(( $(date +%s) - t0 )) s, verify rc $vrc, $(du -sh "$d" | cut -f1)"
  local tag=$name; [ $# -gt 0 ] && tag="$name$(echo "$@" | tr ' ' '_')"
  timeout 150 $BS blueshift bench --model "$d" --prompt-tokens 512 --gen-tokens 128 --reps 5 --json "$@" > "$OUT/$tag.bench.json" 2> "$OUT/$tag.bench.err" \
    || { echo "$tag: bench failed"; tail -3 "$OUT/$tag.bench.err"; return; }
  python3 - "$OUT/$tag.bench.json" "$tag" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: decode {d['decode_tok_s']:.1f} tok/s (floor {d['floor_tok_s']:.0f}, {d['pct_of_peak']:.1f}% of "
      f"{d['peak_gb_s']:.0f} GB/s), prefill {d['prefill_tok_s']:.0f} tok/s, TTFT {d['ttft_ms']:.1f} ms, "
      f"submits/token {d['submits_per_token']:.4f}, bytes/token weights {d['weight_bytes_per_token']/1e6:.1f} MB "
      f"kv {d['kv_bytes_per_token']/1e6:.2f} MB state {d['state_bytes_per_token']/1e6:.2f} MB, load {d['load_s']:.2f} s")
PY
}
row gemma-3-1b-it-q4k-ehf16-af32
row lfm2-5-1-2b-instruct-q4k-ehf16-af32
row qwen-3-5-0-8b-q4k-ehaf16
row qwen-3-5-2b-q4k-ehaf16
row gemma-4-e2b-it-q4k-ehf16-af32
rm -rf /tmp/like
