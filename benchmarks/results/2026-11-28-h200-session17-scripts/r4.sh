#!/usr/bin/env bash
# Session 17 R4 (final tree): all four rows beside llama.cpp's Vulkan backend (run_peer.sh, 512 + 128, medians of 5).
# Predicted against S10 (session 16): decode 1B q4_k_m 909 -> ~945 tok/s, 1B f16 767 -> ~790, 8B q4_k_m 256 -> ~260,
# 8B f16 167 -> ~176 (per-phase path); prefill and TTFT unchanged (no prefill kernel changed).
# Then, while time is left, the 8B f16's per-phase matvec shapes (rows per workgroup) on the kept model.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/peer-out
export BLUESHIFT_LOAD_STATS=1
timeout 150 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer --keep 2>&1 | tail -2
stamp "1B peer"
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/r4.tar.xz o
timeout $(( 430 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B peer"
cat /tmp/peer-out/peer.md
grep -h "load-stats\|upload-stats" /tmp/peer-out/*.log | head -8
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/r4.tar.xz o
unset BLUESHIFT_LOAD_STATS
# serve's joiners with their prefills overlapped (session 16's prepared s13.sh; predicted: the 8th joiner's prompt_ms
# ~35 -> ~30 ms, the server's TTFT p50 -10-15%).
if [ $(( $(date +%s) - t0 )) -lt 330 ]; then timeout 170 bash .dev/s17/s13.sh 2>&1 | tail -14; fi
stamp "serve"
tar -C /tmp -cJf $OUT/r4.tar.xz o
B="bench --prompt-tokens 512 --gen-tokens 128 --reps 3 --json"
row() { local tag=$1 m=$2; shift 2; [ -f $m/manifest.json ] || return 0; env "$@" timeout 40 $BS blueshift $B --model $m > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d.get('gpu_ms_by_kernel',{});print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s, ttft {d[\"ttft_ms\"]:.2f} ms', {a:round(b,3) for a,b in k.items()})" 2>&1 | tail -1; }
# The per-phase F16 decode's matvec shapes (tuned on the H100: 4 rows a workgroup), and the prefill tile switches, on the
# kept models. Predicted: within +-3% (no model of why the H200 would differ).
m1f=/tmp/bs-peer/llama-3.2-1b/f16 m1q=/tmp/bs-peer/llama-3.2-1b/q4_k_m m8f=/tmp/m8f
rm -rf /tmp/bs-peer/llama-3.2-1b/hf /tmp/bs-peer/llama-3.2-1b/*.gguf
if [ $(( $(date +%s) - t0 )) -lt 360 ]; then
  $BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h8 $m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h8
  stamp "8B f16 model"
fi
for cfg in "def" "mr2 BLUESHIFT_MATVEC_ROWS=2" "mr8 BLUESHIFT_MATVEC_ROWS=8" "gr2 BLUESHIFT_GATED_ROWS=2" "gr8 BLUESHIFT_GATED_ROWS=8"; do
  [ $(( $(date +%s) - t0 )) -gt 470 ] && break
  set -- $cfg; tag=$1; shift; row m1f-$tag $m1f "$@"; row m8f-$tag $m8f "$@"
done
for cfg in "def" "sk0 BLUESHIFT_MATMUL_SK64=0" "sk1 BLUESHIFT_MATMUL_SK64=1"; do
  [ $(( $(date +%s) - t0 )) -gt 500 ] && break
  set -- $cfg; tag=$1; shift; row p1f-$tag $m1f "$@"; row p1q-$tag $m1q "$@"
done
tar -C /tmp -cJf $OUT/r4.tar.xz o
stamp done
