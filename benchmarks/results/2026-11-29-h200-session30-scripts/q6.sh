#!/usr/bin/env bash
# Q6 (session 30, b4c6aed's kernels): where the time goes with the o projection folded (persistent_phases.sh, 16-token
# prompt): the 8B with and without the fold, the 1B with it. With the fold, "P3 o" is the o rows' work and "P2" the
# attention items with their group counts; the barriers-alone row has 3 grid barriers a layer, not 4.
# Predicted: barriers alone -25% (a quarter of the grid barriers gone; 8B 0.34 -> ~0.26 ms, 1B 0.16 -> ~0.12).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o /tmp/m1 /tmp/m8; mkdir -p /tmp/o /tmp/m1 /tmp/m8
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m1
timeout 60 benchmarks/persistent_phases.sh $BS /tmp/m1/m 32 | tee /tmp/o/phases-1b.txt
stamp 1b
tar -C /tmp -cJf $OUT/q6.tar.xz o
ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m8
timeout 90 benchmarks/persistent_phases.sh $BS /tmp/m8/m 32 | tee /tmp/o/phases-8b.txt
stamp 8b
tar -C /tmp -cJf $OUT/q6.tar.xz o
BLUESHIFT_PERSISTENT_FOLD_O=0 timeout 90 benchmarks/persistent_phases.sh $BS /tmp/m8/m 32 | tee /tmp/o/phases-8b-nofold.txt
stamp 8b-nofold
tar -C /tmp -cJf $OUT/q6.tar.xz o
