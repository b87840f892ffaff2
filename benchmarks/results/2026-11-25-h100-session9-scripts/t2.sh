#!/usr/bin/env bash
# Session 9, run T2: Q6_K's k-64 tile with X-only touches registered: test_coopmat (float64), and its times
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
timeout 150 $BS test_coopmat > $OUT/test_coopmat.txt 2>&1; tail -1 $OUT/test_coopmat.txt; grep -E "Failure|FAILED" $OUT/test_coopmat.txt | head
S="--matmul 512 --shape 4096x14336,2048x8192,1024x4096 --reps 20 --rounds 3 --only matmul_cm"
timeout 100 $BS bs_gemv_bench $S --dtype q6k > $OUT/q6k.txt 2>&1; grep -E "sk64|planned" $OUT/q6k.txt | awk '{printf "%-5s %-11s %-14s %8s %s\n", $1, $2, $5, $6, $NF}'
