#!/usr/bin/env bash
# H100 run B (session 3, 2026-11-24): Gemma 4 parity with --precision f32, Gemma 4 bench rows (E2B at both
# precisions, 12B), the W4A16 load A/B (GPU repack vs BLUESHIFT_HOST_REPACK=1) on the 12B W4A16 manifest,
# and a llama 1B q4_k_m row against the merged tree. Everything it writes goes to $OUT/run-b.tar.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
OUT=${OUT:-/tmp/out}; R=/tmp/run-b; mkdir -p "$OUT" $R /tmp/like
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== parity, Gemma 4 at --precision f32 (refs made here)"
python3 $SHARED/tools/make_refs_2026.py /tmp/refs gemma4-tiny,gemma4e-tiny > $R/make_refs.txt 2>&1 || tail -3 $R/make_refs.txt
timeout 120 python3 benchmarks/parity_check.py "$BS" /tmp/refs gemma4-tiny gemma4e-tiny
summary() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: decode {d['decode_tok_s']:.1f} tok/s (floor {d['floor_tok_s']:.0f}, {d['pct_of_peak']:.1f}% of "
      f"{d['peak_gb_s']:.0f} GB/s), prefill {d['prefill_tok_s']:.0f} tok/s, TTFT {d['ttft_ms']:.1f} ms, "
      f"submits/token {d['submits_per_token']:.4f}, bytes/token weights {d['weight_bytes_per_token']/1e6:.1f} MB "
      f"kv {d['kv_bytes_per_token']/1e6:.2f} MB state {d['state_bytes_per_token']/1e6:.2f} MB, load {d['load_s']:.2f} s")
PY
}
synth() {  # manifest
  rm -rf /tmp/like/$1; t0=$(date +%s)
  timeout 200 $BS blueshift synth --like "$SHARED/data/doppler/$1/manifest.json" /tmp/like/$1 --seed 1 > $R/$1.synth.txt 2>&1 \
    || { echo "$1: synth failed"; tail -3 $R/$1.synth.txt; return 1; }
  echo "$1: synth $(( $(date +%s) - t0 )) s, $(du -sh /tmp/like/$1 | cut -f1)"
}
bench() {  # manifest tag [args]
  local m=$1 tag=$2; shift 2
  timeout 200 $BS blueshift bench --model /tmp/like/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json "$@" > $R/$tag.json 2> $R/$tag.err \
    && summary $R/$tag.json $tag || { echo "$tag: bench failed"; tail -3 $R/$tag.err; }
}
echo "== Gemma 4 E2B"
synth gemma-4-e2b-it-q4k-ehf16-af32 && {
  bench gemma-4-e2b-it-q4k-ehf16-af32 e2b-f16
  bench gemma-4-e2b-it-q4k-ehf16-af32 e2b-f32 --precision f32
  rm -rf /tmp/like/gemma-4-e2b-it-q4k-ehf16-af32; }
echo "== Gemma 4 12B (Q4K)"
synth gemma-4-12b-it-text-q4k-ehf16-af16 && { bench gemma-4-12b-it-text-q4k-ehf16-af16 12b-q4k; rm -rf /tmp/like/gemma-4-12b-it-text-q4k-ehf16-af16; }
echo "== Gemma 4 12B W4A16: load, GPU repack vs host repack (alternating, 3 each)"
W=gemma-4-12b-it-text-w4a16-ct-ehf16-af16
synth $W && {
  timeout 60 $BS blueshift verify /tmp/like/$W | tail -2
  for i in 1 2 3; do
    for host in 0 1; do
      if [ $host = 1 ]; then BLUESHIFT_HOST_REPACK=1 timeout 120 $BS blueshift bench --model /tmp/like/$W --load-only --json > $R/w4a16-load-host$i.json 2>&1
      else timeout 120 $BS blueshift bench --model /tmp/like/$W --load-only --json > $R/w4a16-load-gpu$i.json 2>&1; fi
      python3 -c "import json,sys; d=json.load(open('$R/w4a16-load-$([ $host = 1 ] && echo host || echo gpu)$i.json')); print('w4a16 load', '$([ $host = 1 ] && echo host || echo gpu)', '%.2f s' % d['load_s'])" 2>&1 | tail -1
    done
  done
  bench $W 12b-w4a16
  rm -rf /tmp/like/$W; }
echo "== llama 3.2 1B q4_k_m (merged tree)"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/l1hf --seed 1 > /dev/null && \
  $BS blueshift convert /tmp/l1hf /tmp/l1 --quant q4_k_m > /dev/null && rm -rf /tmp/l1hf && {
  timeout 100 $BS blueshift bench --model /tmp/l1 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $R/llama1b.json 2> $R/llama1b.err && summary $R/llama1b.json llama-3.2-1b-q4_k_m; }
} 2>&1 | tee $R/run-b.txt
tar -C /tmp -cf "$OUT/run-b.tar" run-b
