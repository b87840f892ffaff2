#!/usr/bin/env bash
# W37 (session 44): the persistent kernel on F16 layers again (BLUESHIFT_PERSISTENT=1), against the per-phase default,
# 1B and 8B f16, 512 + 128, 5 reps, alternated twice.
# History: F16 layers were left on the per-phase decode in session 17 (H200, R2: 8B f16 167.1 persistent against 175.7
# per-phase; 1B f16 671 against 767). Since then the kernel took the q4_k_m 8B from 256 to 371 tok/s (barriers,
# TBL_SMEM, TOUCH, the o fold, EARLY, STREAM), and the per-phase 8B f16 from 175.7 to 194.7 (gated GEMV, rows 2).
# Count (8B f16): 15.0 GB of weights a token; the floor at 4.43 TB/s is 3.40 ms (294 tok/s); per-phase runs 5.12 ms
# (65.9%). The F16 dot in the kernel is a plain f16vec2 stream (no slots), so the kernel's gains since session 17 that
# were not Q4_K-specific (barrier, table, touches, o fold) are what it would carry over: ~0.3-0.4 ms a step.
# Predicted: 8B f16 persistent ~185-205 tok/s (even with per-phase within +-5%); 1B f16 persistent ~820-900 against
# per-phase ~877 (even). If either wins by > 2%, the default for F16 layers moves (persistent.cpp's F16 exclusion).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w37 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  stamp "$cfg f16 converted"
  o=/tmp/w37/$cfg-f16; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg f16: registers of the persistent kernel"
  BLUESHIFT_PERSISTENT=1 bash benchmarks/kernel_registers.sh $BS /tmp/m/m 2>&1 | tee $o/regs.txt
  echo "== $cfg f16: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 pp: pk:BLUESHIFT_PERSISTENT=1
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w37.tar.xz w37
done
