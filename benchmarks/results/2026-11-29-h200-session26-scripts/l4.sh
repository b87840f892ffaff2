#!/usr/bin/env bash
# L4: where the time goes under SPREAD (persistent_phases.sh, 16-token prompt: K3's breakdown again), and the h16
# kernel's registers (BLUESHIFT_PIPELINE_STATS=1), for the next session's counts.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
. benchmarks/ab_common.sh
for cfg in llama-3.2-1b llama-3.1-8b; do
  ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/ph-$cfg
  [ $cfg = llama-3.2-1b ] && BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/ph-$cfg/m --prompt-tokens 16 \
    --gen-tokens 8 --reps 1 --json 2>&1 >/dev/null | grep -iE "persistent|matvec_q6k" | head -20 | tee /tmp/o/stats-$cfg.txt
  timeout 240 benchmarks/persistent_phases.sh $BS /tmp/ph-$cfg/m > /tmp/o/phases-$cfg.txt 2>&1
  cat /tmp/o/phases-$cfg.txt
  rm -rf /tmp/ph-$cfg
  stamp "$cfg phases"
  tar -C /tmp -cJf $OUT/l4.tar.xz o
done
