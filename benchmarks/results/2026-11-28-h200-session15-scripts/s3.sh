#!/usr/bin/env bash
# Session 15, run S3 (final tree, the defaults): HF parity of llama-tiny and phi3-tiny; on the 1B, split-k GEMMs
# against none (BLUESHIFT_MATMUL_SPLITK=0) and the gated GEMM for Q4_K (BLUESHIFT_GATED_GEMM=1); serve's own TTFT
# (serve_load.py, server timings); then all four rows beside llama.cpp's Vulkan backend (run_peer.sh, 512 + 128,
# medians of 5).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 120 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/bench-$m-$lab.json 2>/tmp/err.txt
  python3 - /tmp/o/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
print(f"{sys.argv[2]} {sys.argv[3]:8s} ttft {d['ttft_ms']:6.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% peak {d['peak_gb_s']:5.0f}")
PY
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
for i in 1 2; do
  bench m1q def-$i; bench m1q nosplit-$i BLUESHIFT_MATMUL_SPLITK=0; bench m1q gated-$i BLUESHIFT_GATED_GEMM=1
  bench m1f def-$i; bench m1f nosplit-$i BLUESHIFT_MATMUL_SPLITK=0
done
stamp "1B A/B"
echo "== serve (1B q4_k_m): serve_load, server-side TTFT"
for c in 1 8; do
  $BS blueshift serve --model /tmp/m1q --port 0 --parallel $c --ctx 1024 > /tmp/serve.out 2> /tmp/serve.log &
  pid=$!; port=""
  for _ in $(seq 1 300); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' /tmp/serve.out 2>/dev/null | grep -o '[0-9]*$'); [ -n "$port" ] && break; sleep 0.1
  done
  if [ -z "$port" ]; then echo "serve did not start"; tail -3 /tmp/serve.log; kill $pid; continue; fi
  timeout 60 python3 benchmarks/serve_load.py "http://127.0.0.1:$port" --requests $(( 16 * c )) --concurrency $c --max-tokens 64 --label "serve c$c" | tee /tmp/o/serve-c$c.json
  kill $pid; wait $pid 2>/dev/null
done
rm -rf /tmp/m1q /tmp/m1f
stamp "serve"
mkdir -p /tmp/peer-out
timeout 150 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "1B peer"
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/s3.tar.xz o
timeout $(( 585 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B peer"
cat /tmp/peer-out/peer.md
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/s3.tar.xz o
stamp "all done"
