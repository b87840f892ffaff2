#!/usr/bin/env bash
# For the next session (not run): (1) serve's text arrival on the H100: at concurrency 1 its TTFT equalled its
# whole latency in S1 (28 ms for 16 tokens), while on lavapipe the text streams (serve_load.py --trace lists each
# chunk's arrival); (2) the Q6_K padding's load time against unpadded loads in one run: build a bundle at 90b1653
# (before the padding) into .dev/carry_old (blueshift and its libs), carry both.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf1 --seed 1 --tokenizer builtin >/dev/null 2>&1
$BS blueshift convert /tmp/hf1 /tmp/ms --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf1
$BS blueshift serve --model /tmp/ms --port 0 --parallel 1 --ctx 1024 > /tmp/serve.out 2> /tmp/serve.log &
pid=$!; port=""
for _ in $(seq 1 300); do
  port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' /tmp/serve.out 2>/dev/null | grep -o '[0-9]*$'); [ -n "$port" ] && break; sleep 0.1
done
timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests 10 --concurrency 1 --max-tokens 64 --trace 3
kill $pid; wait $pid 2>/dev/null
if [ -f .dev/carry_old/bundle.tar.xz ]; then
  mkdir -p /tmp/old && tar -C /tmp/old -xJf .dev/carry_old/bundle.tar.xz
  $BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
  for i in 1 2 3; do for r in new old; do R=$BS; [ $r = old ] && R=/tmp/old/bundle/run
    echo "$r load_s $($R blueshift bench --model /tmp/m8q --prompt-tokens 8 --gen-tokens 2 --reps 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["load_s"])')"
  done; done
fi
