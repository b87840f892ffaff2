#!/usr/bin/env bash
# Session 13, run S3 (at the Q6_K padding + Uploader::write_with tree): knobs A/B on 1B and 8B q4_k_m (the head's
# rows a workgroup, BLUESHIFT_HEAD_ROWS=4|8; Q6_K's k-64 tile without X touches, BLUESHIFT_Q6K_PREFETCH=0; the
# gated GEMM for Q4_K, BLUESHIFT_GATED_GEMM=1), then llama.cpp's Vulkan backend beside blueshift on the 8B f16
# (run_peer.sh, 512 + 128, medians of 5), the row session 12 did not run.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/bench-$m-$lab.json 2> /tmp/err.txt
  python3 - /tmp/o/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
k = d.get('gpu_ms_by_dispatch', {})
head = [v for n, v in k.items() if n.startswith('matvec')]
print(f"{sys.argv[2]} {sys.argv[3]:7s} ttft {d['ttft_ms']:6.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% | persistent {k.get('decode_persistent', 0):.3f} head {head[0] if head else 0:.3f} ms | load {d['load_s']:.2f} s")
PY
  grep -E "internal|rror" /tmp/err.txt | head -3
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B model"
for i in 1 2; do
  bench m1q def$i; bench m1q hr4-$i BLUESHIFT_HEAD_ROWS=4; bench m1q hr8-$i BLUESHIFT_HEAD_ROWS=8
  bench m1q nopf$i BLUESHIFT_Q6K_PREFETCH=0; bench m1q gated$i BLUESHIFT_GATED_GEMM=1
done
stamp "1B A/B"; rm -rf /tmp/m1q
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
for i in 1 2; do
  bench m8q def$i; bench m8q hr4-$i BLUESHIFT_HEAD_ROWS=4; bench m8q nopf$i BLUESHIFT_Q6K_PREFETCH=0; bench m8q gated$i BLUESHIFT_GATED_GEMM=1
done
stamp "8B A/B"; rm -rf /tmp/m8q
tar -C /tmp -cJf $OUT/s3.tar.xz o
mkdir -p /tmp/peer-out
timeout $(( 570 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B f16 peer"
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
stamp "all done"
