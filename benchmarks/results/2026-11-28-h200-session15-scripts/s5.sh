#!/usr/bin/env bash
# Session 15, run S5: where serve's ~2 s TTFT tail at concurrency 8 (S4) comes from: per-request server times for
# two waves on a fresh server (cold, then warm), without and with the batched path's warm-up at start
# (BLUESHIFT_SERVE_WARMUP=0 / default).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 --tokenizer builtin >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
stamp "model"
export __GL_SHADER_DISK_CACHE=0  # every server compiles its pipelines itself (S5 first ran with the cache filled by the server before)
for w in 1 0; do
  ts=$(date +%s.%N)
  BLUESHIFT_SERVE_WARMUP=$w $BS blueshift serve --model /tmp/m1q --port 0 --parallel 8 --ctx 1024 > /tmp/serve.out 2> /tmp/serve-w$w.log &
  pid=$!; port=""
  for _ in $(seq 1 600); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' /tmp/serve.out 2>/dev/null | grep -o '[0-9]*$'); [ -n "$port" ] && break; sleep 0.05
  done
  echo "warm-up $w: listening after $(python3 -c "print(round($(date +%s.%N) - $ts, 2))") s"
  if [ -z "$port" ]; then echo "serve did not start"; tail -3 /tmp/serve-w$w.log; kill $pid 2>/dev/null; continue; fi
  for r in cold warm; do
    timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests 16 --concurrency 8 --max-tokens 64 \
      --per-request --label "w$w $r" | tee /tmp/o/serve-w$w-$r.json
  done
  timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests 64 --concurrency 8 --max-tokens 64 \
    --label "w$w 64" | tee /tmp/o/serve-w$w-64.json
  kill $pid; wait $pid 2>/dev/null
done
stamp "serve"
tar -C /tmp -cJf $OUT/s5.tar.xz o
