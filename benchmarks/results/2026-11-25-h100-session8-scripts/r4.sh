#!/usr/bin/env bash
# Session 8, run 4: (a) Q4_K sk64 with X-only touches / header kept per block; F16, Q8_0 touches (isolated, 512
# tokens); (b) the persistent decode kernel with two 256-wide workgroups per SM (110 registers now, run 1).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
S="--matmul 512 --shape 4096x4096,14336x4096,4096x14336,1024x4096,2048x2048,8192x2048,2048x8192 --reps 20 --rounds 3"
BLUESHIFT_PIPELINE_STATS=1 timeout 300 $BS bs_gemv_bench $S --dtype q4k,q6k,f16,q8_0 --cm-spv .dev/s8/spv > $OUT/gemm.txt 2> $OUT/gemm-stats.txt
echo "gemm rc=$? $(( $(date +%s) - t0 )) s"
grep -v "^#" $OUT/gemm.txt | grep "sk64\|128x128 " | awk '{printf "%-5s %-11s %-12s %-12s %8s\n", $1, $2, $4, $5, $6}'
grep pipeline-stats $OUT/gemm-stats.txt | sort -u | grep "pf\|hdr\|sk64" | sed 's/Binary Size=[0-9]*, Stack Size=0, Local Memory Size=[0-9]*, //' | sed 's/pipeline-stats //'
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
echo "1B ready $(( $(date +%s) - t0 )) s"
dec() { env $2 timeout 60 $BS blueshift bench --model /tmp/$1 --prompt-tokens 16 --gen-tokens 128 --reps 5 --json > /tmp/d.json 2>/tmp/d.err \
  && python3 -c "
import json; d=json.load(open('/tmp/d.json'))
print('decode %-3s %-60s %7.1f tok/s  %s' % ('$1', '$2', d['decode_tok_s'], d.get('decode_path', '')))" || echo "decode $1 $2 failed: $(tail -2 /tmp/d.err)"; }
BLUESHIFT_PIPELINE_STATS=1 BLUESHIFT_PERSISTENT_WG=256 BLUESHIFT_PERSISTENT_GRID=264 timeout 60 $BS blueshift bench --model /tmp/m1 --prompt-tokens 16 --gen-tokens 8 --reps 1 2>&1 | grep -i "persistent\|error\|timed" | cut -c1-300
for r in 1 2; do
  dec m1 X=0
  dec m1 "BLUESHIFT_PERSISTENT_WG=256 BLUESHIFT_PERSISTENT_GRID=264"
  dec m1 "BLUESHIFT_PERSISTENT_WG=256 BLUESHIFT_PERSISTENT_GRID=132"
  dec m1 "BLUESHIFT_PERSISTENT_WG=384 BLUESHIFT_PERSISTENT_GRID=132"
done
echo "all done $(( $(date +%s) - t0 )) s"
