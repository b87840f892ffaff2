#!/usr/bin/env bash
# H100 run D (session 3, 2026-11-24): Qwen 3.6 27B (outputGateType "swish" = the sigmoid gate) through
# synth --like, verify, generate --max-tokens 8, and a bench row. Output: $OUT/run-d.txt and the bench JSON.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/like
{
for d in qwen-3-6-27b-q4k-eaf16 qwen-3-6-27b-q4k-ehaf16; do
  t0=$(date +%s)
  timeout 150 $BS blueshift synth --like $SHARED/data/doppler/$d/manifest.json /tmp/like/$d --seed 1 > /tmp/$d.synth.txt 2>&1 || { echo "$d synth failed: $(tail -1 /tmp/$d.synth.txt)"; continue; }
  timeout 100 $BS blueshift verify /tmp/like/$d | tail -1
  $BS blueshift info /tmp/like/$d | grep -E "^config|^hybrid" | cut -c1-200
  timeout 150 $BS blueshift generate --model /tmp/like/$d --prompt-tokens 2,106,1645,4099 --max-tokens 8 --ignore-eos 2>&1 >/dev/null | tail -1
  echo "$d: rc $? after $(( $(date +%s) - t0 )) s"
  if [ $d = qwen-3-6-27b-q4k-ehaf16 ]; then
    timeout 200 $BS blueshift bench --model /tmp/like/$d --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $OUT/$d.bench.json 2> /tmp/b.err || tail -3 /tmp/b.err
    python3 - $OUT/$d.bench.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"bench: decode {d['decode_tok_s']:.1f} tok/s (floor {d['floor_tok_s']:.0f}, {d['pct_of_peak']:.1f}% of {d['peak_gb_s']:.0f} GB/s), "
      f"prefill {d['prefill_tok_s']:.0f} tok/s, TTFT {d['ttft_ms']:.1f} ms, submits/token {d['submits_per_token']:.4f}, "
      f"bytes/token weights {d['weight_bytes_per_token']/1e6:.1f} MB kv {d['kv_bytes_per_token']/1e6:.2f} MB state {d['state_bytes_per_token']/1e6:.2f} MB, load {d['load_s']:.2f} s")
print("top kernels (ms):", sorted(((k, round(v, 2)) for k, v in d['gpu_ms_by_kernel'].items()), key=lambda x: -x[1])[:6])
PY
  fi
  rm -rf /tmp/like/$d
done
} 2>&1 | tee $OUT/run-d.txt
