#!/usr/bin/env bash
# Session 8, run 1: driver statistics (registers, shared memory, spills) of every kernel the 1B runs and of the
# prefill GEMM tiles, and knock-out builds of the Q4_K 128x128sk64 GEMM (X loads, W loads, shared stores,
# barriers, MMAs) timed in isolation at 512 tokens.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
BLUESHIFT_PIPELINE_STATS=1 timeout 300 $BS bs_gemv_bench --matmul 512 --dtype q4k,q6k --shape 4096x4096,14336x4096,4096x14336 \
  --reps 20 --rounds 3 --cm-spv .dev/s8/spv > $OUT/gemm.txt 2> $OUT/gemm-stats.txt
echo "gemm rc=$? $(( $(date +%s) - t0 )) s"
grep -v "^#" $OUT/gemm.txt | grep -v " matmul  " | head -80
grep pipeline-stats $OUT/gemm-stats.txt | sort -u | cut -c1-400 | head -40
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
BLUESHIFT_PIPELINE_STATS=1 timeout 120 $BS blueshift bench --model /tmp/m1 --prompt-tokens 512 --gen-tokens 16 --reps 1 > $OUT/bench1.txt 2> $OUT/bench1-stats.txt
echo "bench rc=$? $(( $(date +%s) - t0 )) s"
grep pipeline-stats $OUT/bench1-stats.txt | sort -u | cut -c1-300 | head -80
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
