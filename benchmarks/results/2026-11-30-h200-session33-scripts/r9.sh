#!/usr/bin/env bash
# R9 (session 33, written, not run: for the next session; carry .gl and .dev/carry, a bundle of eecc7be or later).
# The phase re-baseline session 32 asked for: persistent_phases.sh on the 8B and 1B q4_k_m (32 generated tokens),
# with NORM_SLOTS on (the default) and off. Why NORM_SLOTS saved the 1B ~0.46 us a norm (24 norms, kernel -1.8%) but
# the 8B nothing (48 norms, -0.1%; session 33, R1): compare the two runs' no-work time (SKIP 31: barriers and staging)
# and the staging cost a barrier. Guess to test: EARLY 2 issues P4's weight loads before the norm, so the 8B's norm
# is off its critical path; then SKIP 31's staging should fall on both models, and the 8B's whole-kernel time not.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r9
for cfg in llama-3.1-8b llama-3.2-1b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  echo "== $cfg, NORM_SLOTS on"
  benchmarks/persistent_phases.sh $BS /tmp/m/m 32 | tee /tmp/r9/$cfg-phases-ns.txt
  echo "== $cfg, NORM_SLOTS off"
  BLUESHIFT_PERSISTENT_NORM_SLOTS=0 benchmarks/persistent_phases.sh $BS /tmp/m/m 32 | tee /tmp/r9/$cfg-phases-floats.txt
  stamp $cfg
  tar -C /tmp -cJf $OUT/r9.tar.xz r9
done
