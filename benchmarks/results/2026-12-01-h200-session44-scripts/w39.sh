#!/usr/bin/env bash
# W39 (session 44): W37's 8B f16 on the persistent kernel again at 512 invocations (BLUESHIFT_PERSISTENT_WG=512: the
# driver's register cap is 128 there, against 96 at 640, where W37 measured 96 registers and a 240-byte spill), against
# the per-phase default and the kernel at its default 640; 512 + 128, 5 reps, alternated twice.
# Count: at 640 the spill costs each lane its spilled words' round trips in every F16 step; at 512 the grid has 20%
# fewer lanes streaming (16 subgroups a SM against 20), which the q4_k_m 8B measured at -1..-3% in the sessions that
# set 640.
# Predicted: pk512 170-185 tok/s (no spill), pk640 ~158.7 (W37), pp 194.8: the per-phase default stays.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w39 $OUT
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.1-8b.json f16 /tmp/m
stamp "8B f16 converted"
o=/tmp/w39/llama-3.1-8b-f16; mkdir -p $o
BLUESHIFT_PERSISTENT=1 bash benchmarks/kernel_registers.sh $BS /tmp/m/m wg512:BLUESHIFT_PERSISTENT_WG=512 2>&1 | tee $o/regs.txt
ab_rounds $o $BS /tmp/m/m 512 128 5 2 pp: pk640:BLUESHIFT_PERSISTENT=1 pk512:BLUESHIFT_PERSISTENT=1,BLUESHIFT_PERSISTENT_WG=512
stamp "done"
tar -C /tmp -cJf $OUT/w39.tar.xz w39
