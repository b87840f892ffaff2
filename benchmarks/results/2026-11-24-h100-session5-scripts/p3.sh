#!/usr/bin/env bash
# P3/P5: GEMM variants from .dev/s5/spv in isolation (M=512)
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 300 $BS bs_gemv_bench --matmul 512 --dtype q4k,q6k,f16 --shape 512x2048,2048x2048,8192x2048,2048x8192,1024x4096,4096x4096,14336x4096,4096x14336 \
  --reps 20 --rounds 3 --cm-spv .dev/s5/spv 2>&1 | grep -v "^#" > $OUT/g.txt
grep -v "matmul  \|^#\|stream_read\|NVIDIA" $OUT/g.txt | awk '{printf "%-4s %-11s %-14s %-10s %9s %8s stream %9s\n",$1,$2,$4,$5,$6,$8,$11}' | sort -k1,2 -s
