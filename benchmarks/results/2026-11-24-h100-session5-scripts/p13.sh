#!/usr/bin/env bash
# P13: the head matvec (128256 rows) at batch 1: workgroup size x rows per workgroup, in isolation and back to back.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
timeout 200 $BS bs_gemv_bench --dtype q6k,q4k --shape 128256x2048,128256x4096,2048x2048,8192x2048,2048x8192 --wg 32,64,128,256 --rows 1,2,4,8,16 \
  --reps 20 --rounds 3 2>&1 | grep -v "^#" > $OUT/head.txt
head -3 $OUT/head.txt; awk '{print $1,$2,$6,$7,$8,$14}' $OUT/head.txt | sort -k1,2 -k6n | awk '{k=$1" "$2; if (c[k]++ < 3) print}'
