#!/usr/bin/env bash
# Session 10, run A4: the gated GEMM on the 8B, q4_k_m (three alternating pairs) and f16 (logits, two pairs), then
# llama.cpp's Vulkan backend beside blueshift on the 1B (run_peer.sh, 512 + 128, medians of 5) at this tree.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128000)) for _ in range(400)))")
check() {
  BLUESHIFT_GATED_GEMM=0 $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/a.npy >/dev/null 2>&1
  $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/b.npy >/dev/null 2>&1
  python3 .dev/s10/cmp.py /tmp/b.npy /tmp/a.npy; cmp -s /tmp/a.npy /tmp/b.npy && echo "$1: logits bit-identical"
}
ttft() { for r in $(seq $2); do for s in 0 1; do
  BLUESHIFT_GATED_GEMM=$s timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/b.json 2>/dev/null \
    && python3 -c "
import json; d=json.load(open('/tmp/b.json')); print('$1 GATED=$s prefill %8.1f tok/s  TTFT %6.2f ms' % (d['prefill_tok_s'], d['ttft_ms']))"; done; done; }
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8q --quant q4_k_m >/dev/null 2>&1
echo "8B q4 converted $(( $(date +%s) - t0 )) s"
ttft m8q 3; rm -rf /tmp/m8q
$BS blueshift convert /tmp/hf /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
echo "8B f16 converted $(( $(date +%s) - t0 )) s"
check m8f; ttft m8f 2; rm -rf /tmp/m8f
mkdir -p /tmp/peer-out
timeout 230 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/s5/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -3
cat /tmp/peer-out/peer.md
tar -C /tmp -cJf $OUT/peer.tar.xz peer-out
echo "all done $(( $(date +%s) - t0 )) s"
