#!/usr/bin/env bash
# Session 12, run R5: the prefill's wait polled (default) against blocking (BLUESHIFT_PREFILL_SPIN=0) on the 1B
# q4_k_m, then the tree's defaults beside llama.cpp's Vulkan backend (run_peer.sh, 512 + 128, medians of 5):
# Llama-3.2-1B q4_k_m and f16, Llama-3.1-8B q4_k_m and f16.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
    > $OUT/bench-$m-$lab.json 2> /tmp/err.txt
  python3 - $OUT/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
print(f"{sys.argv[2]} {sys.argv[3]:10s} ttft {d['ttft_ms']:6.2f} first-submit {d['prefill_first_submit_ms']:5.2f} rec {d['prefill_record_ms']:5.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f}")
PY
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
$BS blueshift logits --model /tmp/m1q --tokens $P --out /tmp/a.npy 2>&1 | grep -i error
BLUESHIFT_F16_ONLY=0 $BS blueshift logits --model /tmp/m1q --tokens $P --out /tmp/b.npy 2>&1 | grep -i error
cmp -s /tmp/a.npy /tmp/b.npy && echo "m1q prefill logits (300 rows): f16 only == both, bit for bit" || echo "m1q f16-only logits DIFFER"
rm -f /tmp/a.npy /tmp/b.npy
bench m1q spin; bench m1q block BLUESHIFT_PREFILL_SPIN=0; bench m1q spin2; bench m1q block2 BLUESHIFT_PREFILL_SPIN=0
rm -rf /tmp/m1q
stamp "spin A/B"
mkdir -p /tmp/peer-out
timeout 200 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "1B peer"
timeout $(( 330 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B q4_k_m peer"
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
if [ $(( $(date +%s) - t0 )) -lt ${F16_BEFORE:-0} ]; then
  timeout $(( 560 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
  stamp "8B f16 peer"
fi
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
stamp "all done"
