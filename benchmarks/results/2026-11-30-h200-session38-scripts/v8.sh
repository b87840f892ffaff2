#!/usr/bin/env bash
# V8: the register attribution by phase at 768 wide on the 8B q4_k_m (kernel_registers.sh --phases at
# BLUESHIFT_PERSISTENT_WG=768, where the driver caps the kernel at 80 registers; V6: 80 bytes spilled there, 351.1
# tok/s against 365.1 at 640). What each phase's code spills alone says how far each is from fitting 80, which
# 768 wide needs (P1 in one round of 3,168 subgroups instead of two, gate/up in 5 rounds instead of 6).
# Predicted: only_p1 and only_down spill (95 and 99 at 512 wide in V5), the rest fit. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/v8/llama-3.1-8b
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m
stamp "model"
BLUESHIFT_PERSISTENT_WG=768 benchmarks/kernel_registers.sh $BS /tmp/m/m --phases | tee /tmp/v8/llama-3.1-8b/registers768.txt
stamp "done"
tar -C /tmp -cJf $OUT/v8.tar.xz v8
