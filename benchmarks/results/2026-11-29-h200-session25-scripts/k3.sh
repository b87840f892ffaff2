#!/usr/bin/env bash
# K3: EARLY (spec constant 13): the gate/up stream's first loads issued before the phase's staging (the norm of x and
# its f16 slots), so that their memory round trip overlaps the staging's. new = k1's tree + EARLY; e0 = EARLY off.
# Predicted: one round trip (~1 us) a layer less if a workgroup barrier does not wait for the loads in flight: 1B
# -16 us a step (+2%), 8B -32 us (+1%); 0 or worse if it waits. Then persistent_phases.sh on the 1B and 8B (new tree).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
for cfg in llama-3.2-1b llama-3.1-8b qwen2.5-1.5b; do
  timeout 150 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m e0:BLUESHIFT_PERSISTENT_EARLY=0 e1: e0b:BLUESHIFT_PERSISTENT_EARLY=0
  stamp $cfg
  tar -C /tmp -cJf $OUT/k3.tar.xz o
done
. benchmarks/ab_common.sh
for cfg in llama-3.2-1b llama-3.1-8b; do
  ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/ph-$cfg
  timeout 200 benchmarks/persistent_phases.sh $BS /tmp/ph-$cfg/m > /tmp/o/phases-$cfg.txt 2>&1
  cat /tmp/o/phases-$cfg.txt
  stamp "$cfg phases"
  tar -C /tmp -cJf $OUT/k3.tar.xz o
done
