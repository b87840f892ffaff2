#!/usr/bin/env bash
# Session 11, run B2: the tree's defaults (X_EARLY on) beside llama.cpp's Vulkan backend on the 1B (run_peer.sh,
# 512 + 128, medians of 5), then the 8B q4_k_m with the residual rows read early (default) and late (X_EARLY=0),
# alternating, and the 8B q4_k_m peer row if time is left.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/peer-out
timeout 170 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
cat /tmp/peer-out/peer.md
stamp "1B peer"
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 60 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $OUT/bench-$m-$lab.json 2>/dev/null
  python3 - $OUT/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); k = d.get("gpu_ms_by_kernel", {})
print(f"{sys.argv[2]} {sys.argv[3]:8s} decode {d['decode_tok_s']:7.1f} tok/s {d['pct_of_peak']:5.1f}% of {d['peak_gb_s']:6.0f} GB/s | ttft {d['ttft_ms']:6.2f} ms | "
      + ", ".join(f"{n} {v:.3f}" for n, v in sorted(k.items(), key=lambda t: -t[1])[:2]))
PY
}
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
bench m8q early; bench m8q late BLUESHIFT_PERSISTENT_X_EARLY=0; bench m8q early2; bench m8q late2 BLUESHIFT_PERSISTENT_X_EARLY=0
rm -rf /tmp/m8q
stamp "8B A/B"
if [ $(( $(date +%s) - t0 )) -lt 200 ]; then
  timeout $(( 330 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
  cat /tmp/peer-out/peer.md
fi
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
stamp "all done"
