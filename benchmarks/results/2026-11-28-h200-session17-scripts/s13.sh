#!/usr/bin/env bash
# Prepared in session 16 for the next session (not run: no device time left). serve's joiners with their prefills'
# recording overlapped (BLUESHIFT_SERVE_JOIN_OVERLAP=1: each joiner records while those before it run; each gets its
# first token as soon as its own prefill is done) against one after another with a wait each (default), 1B q4_k_m,
# --parallel 8, waves of 8 requests, alternating servers. Copy to .dev/s16/ and carry .gl, .dev/carry (a bundle of
# the tree with the switch) and .dev/s16.
# Predicted: each joiner's server prompt_ms drops by about the recording time of those before it (session 15 S4:
# prompt_ms stepped 5, 10, ... 35 ms over 8 joiners; `bench` puts the 1B's prefill recording at ~0.9 ms for 512
# tokens, less for chat prompts), so the 8th joiner ~35 -> ~30 ms and the server's TTFT p50 down ~10-15%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 --tokenizer builtin >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
stamp "model"
for i in 1 2; do
  for ov in 0 1; do
    BLUESHIFT_SERVE_JOIN_OVERLAP=$ov $BS blueshift serve --model /tmp/m1q --port 0 --parallel 8 --ctx 1024 > /tmp/serve.out 2> /tmp/serve-$ov.log &
    pid=$!; port=""
    for _ in $(seq 1 600); do
      port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' /tmp/serve.out 2>/dev/null | grep -o '[0-9]*$'); [ -n "$port" ] && break; sleep 0.05
    done
    if [ -z "$port" ]; then echo "serve did not start"; tail -3 /tmp/serve-$ov.log; kill $pid 2>/dev/null; continue; fi
    timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests 8 --concurrency 8 --max-tokens 16 --label "warm" > /dev/null
    timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests 64 --concurrency 8 --max-tokens 64 \
      --per-request --label "overlap $ov run $i" | tee /tmp/o/serve-ov$ov-$i.json | tail -3
    kill $pid; wait $pid 2>/dev/null
  done
done
stamp "serve"
true
