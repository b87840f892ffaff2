#!/usr/bin/env bash
# G1: GEMM ablations in isolation (bs_gemv_bench --matmul 512 --cm-spv): where a k step's time goes.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 400 $BS bs_gemv_bench --matmul 512 --dtype q4k,f16 \
  --shape 512x2048,2048x2048,8192x2048,2048x8192,1024x4096,4096x4096,14336x4096,4096x14336 \
  --reps 20 --rounds 3 --cm-spv .dev/gemm/spv 2>&1 | grep -v "^#" > $OUT/g1.txt
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
grep -v " matmul  " $OUT/g1.txt | head -150
