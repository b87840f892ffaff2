#!/usr/bin/env bash
# Q4 (session 30): the landed fold (468611c: float atomics, h16 dot, the row's 9 words loaded at once) against the same
# with the block's codes in two halves of 4 words ($OLD, q4-halves.patch: "halves"), which may take the 8B's kernel
# (640 wide, the driver's cap 96 registers) out of its 48-byte spill; and no fold.
# Predicted: halves without spill at 640; 8B +0.5-1% over base if the spill cost more than the second round trip; the
# 1B (no spill at 512) -0.5% (one more dependent load a row).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o /tmp/m8; mkdir -p /tmp/o /tmp/m8
ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m8
timeout 40 benchmarks/kernel_registers.sh $BS /tmp/m8/m | tee /tmp/o/regs-8b.txt
timeout 40 benchmarks/kernel_registers.sh $OLD /tmp/m8/m | sed 's/^base/halves/' | tee -a /tmp/o/regs-8b.txt
rm -rf /tmp/m8
stamp regs8
timeout 220 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m halves@$OLD: nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp 8b
tar -C /tmp -cJf $OUT/q4.tar.xz o
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m halves@$OLD:
stamp 1b
tar -C /tmp -cJf $OUT/q4.tar.xz o
