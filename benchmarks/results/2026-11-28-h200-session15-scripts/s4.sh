#!/usr/bin/env bash
# Session 15, run S4: (a) why the f16 step sums (S2) were slower: the GEMM pipelines' statistics (registers, spills)
# with F16_ACC on and off, from a bs_prefill_profile built with s2-gemm-f16-acc.patch; (b) serve's own TTFT on the
# 1B q4_k_m (serve_load.py, server timings), concurrency 1 and 8.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
xz -dc .dev/f16acc/bs_prefill_profile.xz > /tmp/bs/bundle/bin/bs_prefill_f16acc && chmod +x /tmp/bs/bundle/bin/bs_prefill_f16acc
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 --tokenizer builtin >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
for v in 1 0; do
  BLUESHIFT_GEMM_F16_ACC=$v BLUESHIFT_PIPELINE_STATS=1 timeout 60 $BS bs_prefill_f16acc /tmp/m1q --tokens 512 --reps 1 --warm 3 \
    > /tmp/o/prof-acc$v.txt 2> /tmp/o/stats-acc$v.txt
  echo "== F16_ACC=$v: matmul_cm pipelines"; grep "pipeline-stats matmul_cm" /tmp/o/stats-acc$v.txt | cut -c1-500 | head -8
  grep -E "^ +matmul " /tmp/o/prof-acc$v.txt | head -3
done
stamp "stats"
echo "== serve (1B q4_k_m): serve_load, server-side TTFT"
for c in 1 8; do
  $BS blueshift serve --model /tmp/m1q --port 0 --parallel $c --ctx 1024 > /tmp/serve.out 2> /tmp/serve.log &
  pid=$!; port=""
  for _ in $(seq 1 300); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' /tmp/serve.out 2>/dev/null | grep -o '[0-9]*$'); [ -n "$port" ] && break; sleep 0.1
  done
  if [ -z "$port" ]; then echo "serve did not start"; tail -3 /tmp/serve.log; kill $pid 2>/dev/null; continue; fi
  timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests $(( 16 * c )) --concurrency $c --max-tokens 64 --label "serve c$c" | tee /tmp/o/serve-c$c.json
  kill $pid; wait $pid 2>/dev/null
done
stamp "serve"
tar -C /tmp -cJf $OUT/s4.tar.xz o
