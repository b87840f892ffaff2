#!/usr/bin/env bash
# L2: SPREAD (spec constant 14, default 1): grid-stride task t to workgroup t % grid, so a phase's last round is spread
# over every SM instead of falling to the first workgroups. Against SPREAD 0 (the old mapping) in one bundle.
# Count: the 8B's q/k/v phase has 3,072 tasks on 2,112 subgroups (60 SMs take 32 tasks, 72 take 16; spread: 23-24 each),
# its gate/up 14,336 (112 or 96 an SM; spread 108-109); the 1B's q/k/v 1,536 (16 on 96 SMs, 0 on 36; spread 11-12).
# Predicted if an SM's own throughput bounds its loads: 8B P1 -25% (0.36 -> 0.27 ms), P4 -2.7%: +3.5% decode; 1B +2%;
# the 3B (P1: 32 or 16 an SM, 1.65 x the mean) and qwen2.5-1.5b (1.55 x) more. If a subgroup's own latency bounds
# them: nothing (a subgroup's most tasks do not change). Logits identical (a task's sums do not depend on its subgroup).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
timeout 60 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m s1: s0:BLUESHIFT_PERSISTENT_SPREAD=0
timeout 90 benchmarks/logits_ab.sh $BS llama-3.1-8b q4_k_m s1: s0:BLUESHIFT_PERSISTENT_SPREAD=0
stamp logits
for cfg in llama-3.2-1b llama-3.1-8b qwen2.5-1.5b llama-3.2-3b; do
  timeout 150 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m s0:BLUESHIFT_PERSISTENT_SPREAD=0
  stamp $cfg
  tar -C /tmp -cJf $OUT/l2.tar.xz o
done
# Phase by phase (persistent_phases.sh's skip bits: 31 = no phase's work, 30 = P1 alone, 23 = P4 alone, 0 = all).
. benchmarks/ab_common.sh
for cfg in llama-3.2-1b llama-3.1-8b; do
  ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/ph-$cfg
  for sp in 0 1; do
    for s in 31 30 23 0; do
      BLUESHIFT_PERSISTENT_SPREAD=$sp BLUESHIFT_PERSISTENT_SKIP=$s $BS blueshift bench --model /tmp/ph-$cfg/m \
        --prompt-tokens 16 --gen-tokens 64 --reps 3 --json > /tmp/o/ph-$cfg-sp$sp-s$s.json
      python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], next(v for k,v in d['gpu_ms_by_dispatch'].items() if k.startswith('decode_persistent')))" \
        /tmp/o/ph-$cfg-sp$sp-s$s.json "$cfg spread $sp skip $s"
    done
  done
  rm -rf /tmp/ph-$cfg
  stamp "$cfg phases"
  tar -C /tmp -cJf $OUT/l2.tar.xz o
done
