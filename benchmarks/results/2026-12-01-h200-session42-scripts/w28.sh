#!/usr/bin/env bash
# W28 (session 42): W26's staging line split by kind (p.skip's bits 7 and 8: the norms' staging of P1 and
# P4, and P5's h), on the 1B and 8B q4_k_m (benchmarks/persistent_phases.sh).
# Predicted: 1B staging 0.087 ms = norms ~0.04 + h ~0.03 + the rest (the o fold's and the head norm's) ~0.015; 8B
# 0.278 = norms ~0.10 + h ~0.14 (57 KB of h a workgroup in 1-2 passes) + ~0.04. "everything" within 0.5% of W26's
# (0.5914 / 2.5672 ms): the tree changed only the masks' immediates.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w28 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w28/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: phases (16-token prompt, 64 tokens)"
  bash benchmarks/persistent_phases.sh $BS /tmp/m/m 64 | tee $o/phases.txt
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w28.tar.xz w28
done
