#!/usr/bin/env bash
# H100 run E (session 3, 2026-11-24): where a decode step of the hybrids goes (bench's per-kernel GPU times),
# for the next session's performance work. Output: $OUT/run-e.txt.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/like
{
for d in qwen-3-5-0-8b-q4k-ehaf16 lfm2-5-1-2b-instruct-q4k-ehf16-af32; do
  $BS blueshift synth --like $SHARED/data/doppler/$d/manifest.json /tmp/like/$d --seed 1 > /dev/null 2>&1
  timeout 120 $BS blueshift bench --model /tmp/like/$d --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/b.json 2>/tmp/b.err || tail -2 /tmp/b.err
  python3 - /tmp/b.json $d <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]}: decode {d['decode_tok_s']:.1f} tok/s, p50 {d['decode_ms_per_token_p50']:.3f} ms, {d['dispatches_per_token']} dispatches, {d['barriers_per_token']} barriers per token")
print("  by kernel (ms):", sorted(((k, round(v, 3)) for k, v in d['gpu_ms_by_kernel'].items()), key=lambda x: -x[1])[:10])
print("  by dispatch (ms):", sorted(((k, round(v, 3)) for k, v in d['gpu_ms_by_dispatch'].items()), key=lambda x: -x[1])[:8])
PY
  rm -rf /tmp/like/$d
done
} 2>&1 | tee $OUT/run-e.txt
