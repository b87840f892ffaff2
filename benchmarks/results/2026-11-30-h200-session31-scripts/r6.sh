#!/usr/bin/env bash
# R6 (session 31, 81da4c9): where the time goes at a short context (persistent_phases.sh, 16-token prompt, 32 tokens)
# now that the fold's o rows are shared over the whole grid (7d30ca3): the 8B and the 1B, as session 30's Q6 measured
# b4c6aed (8B: everything 3.065 ms, P3 o 0.503; no fold 2.848, P3 0.164).
# Predicted: 8B everything ~2.74 ms (R1), P3 o ~0.16-0.20 ms; 1B everything ~0.64 ms, P3 ~0.05.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
rm -rf /tmp/o /tmp/m1 /tmp/m8; mkdir -p /tmp/o /tmp/m1 /tmp/m8
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m1
timeout 80 benchmarks/persistent_phases.sh $BS /tmp/m1/m 32 | tee /tmp/o/phases-1b.txt
stamp 1b
tar -C /tmp -cJf $OUT/r6.tar.xz o
ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m8
timeout 150 benchmarks/persistent_phases.sh $BS /tmp/m8/m 32 | tee /tmp/o/phases-8b.txt
stamp 8b
tar -C /tmp -cJf $OUT/r6.tar.xz o
