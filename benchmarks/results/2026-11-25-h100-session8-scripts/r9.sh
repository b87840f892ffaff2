#!/usr/bin/env bash
# Session 8, run 9: (a) 1B f16 decode on the persistent kernel now that small models take 384 invocations
# (F16 below hidden size 4096 is off by default: session 6 measured 656 -> 615 tok/s at 512); (b) the 128x64 k-64
# tile on the 1B's shapes for Q4_K, Q6_K, Q8_0.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
dec() { env $3 timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens $2 --gen-tokens 128 --reps 5 --json > /tmp/d.json 2>/tmp/d.err \
  && python3 -c "
import json; d=json.load(open('/tmp/d.json'))
print('decode %-4s %4s + 128 %-50s %7.1f tok/s' % ('$1', '$2', '$3', d['decode_tok_s']))" || echo "decode $1 $3 failed: $(tail -2 /tmp/d.err)"; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
$BS blueshift bench --model /tmp/m1f --prompt-tokens 512 --gen-tokens 32 --reps 1 >/dev/null 2>&1
for r in 1 2; do for p in 16 512; do
  for e in X=0 BLUESHIFT_PERSISTENT=1 "BLUESHIFT_PERSISTENT=1 BLUESHIFT_PERSISTENT_WG=512"; do dec m1f $p "$e"; done; done; done
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range(100)))")
BLUESHIFT_PERSISTENT=1 $BS blueshift logits --model /tmp/m1f --tokens $T --step --out /tmp/b.npy >/dev/null 2>&1
$BS blueshift logits --model /tmp/m1f --tokens $T --step --out /tmp/c.npy >/dev/null 2>&1
python3 .dev/s8/cmp.py /tmp/b.npy /tmp/c.npy; rm -rf /tmp/*.npy /tmp/m1f
echo "decode done $(( $(date +%s) - t0 )) s"
S="--matmul 512 --shape 2048x8192,2048x2048,512x2048,8192x2048 --reps 20 --rounds 3"
timeout 120 $BS bs_gemv_bench $S --dtype q4k,q6k,q8_0 --cm-spv .dev/s8/spv > $OUT/gemm.txt 2>&1
grep -v "^#" $OUT/gemm.txt | grep -v " matmul  \|64x128 \|256x128" | awk '{printf "%-5s %-11s %-14s %-12s %8s %s\n", $1, $2, $4, $5, $6, $NF}'
echo "all done $(( $(date +%s) - t0 )) s"
