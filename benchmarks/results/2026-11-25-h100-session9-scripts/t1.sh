#!/usr/bin/env bash
# Session 9, run T1: with the KHR kernels, are the k-64 tile's L1 touches still right? F16 without touches (nopf) or
# X-only (pfx), Q8_0 without, Q4_K and Q6_K with X-only touches, against the registered builds; 8B shapes, M = 512.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
S="--matmul 512 --shape 4096x4096,14336x4096,4096x14336,2048x2048 --reps 20 --rounds 3 --only matmul_cm,nopf,pfx"
timeout 200 $BS bs_gemv_bench $S --dtype f16,q4k,q6k,q8_0 --cm-spv .dev/s9/spv > $OUT/touch.txt 2>&1
grep -E "128x128sk64|nopf|pfx" $OUT/touch.txt | awk '{printf "%-5s %-11s %-14s %-12s %8s\n", $1, $2, $4, $5, $6}'
