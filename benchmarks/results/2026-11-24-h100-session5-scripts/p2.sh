#!/usr/bin/env bash
# P2: occupancy vs tile count: the same FLOPs as M=512 4096x4096 / 14336x4096 / 4096x14336 with k halved and M doubled (2x the workgroups)
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
for spec in "512 4096x4096,14336x4096,4096x14336,2048x2048,2048x8192" "1024 4096x2048,14336x2048,4096x7168,2048x1024,2048x4096" "2048 4096x1024,14336x1024,4096x3584,2048x512,2048x2048"; do
  set -- $spec
  timeout 100 $BS bs_gemv_bench --matmul $1 --dtype q4k --shape $2 --reps 20 --rounds 3 2>&1 | grep matmul_cm | awk '{printf "%-5s %-11s %-7s %-11s %9s %8s stream %9s\n",$1,$2,$3,$5,$6,$8,$11}'
done
