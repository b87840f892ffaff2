#!/usr/bin/env bash
# L7: what sets decode_persistent_h16's 119 registers (L5)? l7-cut.patch (not landed) adds CUT (spec constant 15,
# BLUESHIFT_PERSISTENT_CUT): p.skip's bits as a spec constant, so the phases they skip are compiled out. Registers and
# spills for each cut, on the 1B and 8B q4_k_m (statistics only; the cut kernels' logits are wrong).
# Bits: 1 q/k/v, 2 attention, 4 o, 8 gate/up, 16 down, 32 staging.
# Predicted: the gate/up stream (two buffers of words, its own loop) or the attention sets the peak; no single phase
# alone below ~100.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/o
. benchmarks/ab_common.sh
for cfg in llama-3.2-1b llama-3.1-8b; do
  ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/c-$cfg
  for cut in 0 1 2 4 8 16 32 30 29 27 23 15 31 63; do
    printf '%s cut %2d: ' $cfg $cut
    BLUESHIFT_PERSISTENT_CUT=$cut BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/c-$cfg/m --prompt-tokens 16 \
      --gen-tokens 4 --reps 1 --json 2>&1 >/dev/null | grep "decode_persistent" | head -1 | sed 's/.*\[CS\]: //'
  done
  rm -rf /tmp/c-$cfg
done | tee /tmp/o/cut.txt
tar -C /tmp -cJf $OUT/l7.tar.xz o
