#!/usr/bin/env bash
# H100 (issue 17): serve's continuous batching on a Llama-3.2-1B-shaped q4_k_m (synth with the builtin
# tokenizer, then convert):
#   1. decode throughput: bench (batch 1, the Session loop) beside bench --parallel 4, 16, 32 (aggregate and
#      per-sequence tok/s; prompts of 128 random tokens, 256 generated each, medians of 3), each N with the
#      batch's projections as batched matvecs and as the prefill GEMM (BLUESHIFT_BATCH_GEMM);
#   2. serve end to end: 200 streaming requests at concurrency 16 (benchmarks/serve_load.py, loopback only,
#      128 tokens each), at --parallel 16 and at --parallel 1 (one at a time from the queue).
# The issue's bar: aggregate decode at N = 16 >= 6x the batch-1 figure. About 3 minutes of device time.
#   benchmarks/serve_parallel.sh      (carry .gl .dev/carry; writes $OUT)
set -uo pipefail
. benchmarks/serve_common.sh
serve_model

echo "== decode throughput (prompt 128, 256 generated, medians of 3)"
$BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1  # clocks up
bench 1 256 3
for n in 4 16 32; do
  for g in matvec matmul; do  # the batch's projections as batched matvecs or as the prefill GEMM
    BLUESHIFT_BATCH_GEMM=$g bench "$n-$g" 256 3 --parallel $n
  done
done
python3 - "$OUT" <<'PY'
import sys
sys.path.insert(0, "benchmarks")
from serve_summary import issue_bar, load, step_table
out = sys.argv[1]
base = step_table(out, [f"{n}-{g}" for n in (4, 16, 32) for g in ("matvec", "matmul")], 16,
                  lambda d: f"submits/token {d['submits_per_token']:.4f}, prefill {d['parallel']}x128 {d['prefill_all_ms']:.0f} ms")
best = max((load(out, f"bench-16-{g}.json") or {}).get("aggregate_decode_tok_s", 0) for g in ("matvec", "matmul"))
issue_bar(base, best, "better GEMM")
PY

echo "== serve: 200 streaming requests at concurrency 16, 128 tokens each (loopback)"
for par in 16 1; do
  log="$OUT/serve-$par.log"
  $BS blueshift serve --model /tmp/m1 --port 0 --parallel $par --ctx 512 > "$OUT/serve-$par.out" 2> "$log" &
  pid=$!
  port=""
  for _ in $(seq 1 300); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$OUT/serve-$par.out" 2>/dev/null | grep -o '[0-9]*$')
    [ -n "$port" ] && break
    sleep 0.1
  done
  if [ -z "$port" ]; then echo "serve --parallel $par did not start"; tail -3 "$log"; kill $pid 2>/dev/null; continue; fi
  timeout 150 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests 200 --concurrency 16 --max-tokens 128 \
    --label "serve --parallel $par" | tee "$OUT/load-$par.json"
  curl -s --max-time 5 "http://127.0.0.1:$port/health" > "$OUT/health-$par.json"
  kill $pid; wait $pid 2>/dev/null
done
rm -rf /tmp/m1
