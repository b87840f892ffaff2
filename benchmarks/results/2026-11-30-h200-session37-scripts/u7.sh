#!/usr/bin/env bash
# U7 (session 37): where the persistent kernel's time goes at 70b08ad (TBL_SMEM), persistent_phases.sh on the 1B and
# 8B q4_k_m (16-token prompt, 32 tokens), for comparison with session 35's breakdown (T2: 1B 0.613 ms a step, 8B 2.626).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/u7
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  echo "== $cfg q4_k_m"
  timeout 200 benchmarks/persistent_phases.sh $BS /tmp/m/m 32 2>&1 | tee /tmp/u7/$cfg.txt
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/u7.tar.xz u7
done
