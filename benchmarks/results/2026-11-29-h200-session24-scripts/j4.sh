#!/usr/bin/env bash
# J4: P1's last partial round on pairs of subgroups (QKV_TAIL, spec constant 12), then where the landed kernel's time goes.
#   new = 7da5658 + QKV_TAIL (.dev/carry/bundle.tar.xz); old = 7da5658 (.dev/carry2/bundle-old.tar.xz, $OLD)
# Counted at 512 wide (2112 subgroups): the 8B's P1 is 3072 tasks of 4 steps, 2 rounds (the second 960 tasks): 8
# dependent steps a layer -> 4 + 2 on 1056 pairs (2048 columns a member); the 3B's 2560 tasks of 3 steps, a second
# round of 448: 6 -> 3 + 2 (1536 columns a member, 48 parts: 2 steps).
# Predicted: 3B +1-2%, 8B +1-2.5%, 1B and qwen2.5-1.5b 0 (no tail: 1536 / 1024 tasks, more than the pairs and fewer
# than the subgroups). Logits: 1B identical; 3B differ by the tail tasks' two-part sums.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
timeout 60 benchmarks/logits_ab.sh $BS llama-3.2-3b q4_k_m "old@$OLD:" new: tail0:BLUESHIFT_PERSISTENT_QKV_TAIL=0
timeout 40 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m "old@$OLD:" new:
stamp logits
for cfg in llama-3.2-3b llama-3.1-8b llama-3.2-1b; do
  case $cfg in
    llama-3.2-1b) v=("old1@$OLD:") ;;
    *) v=("old1@$OLD:" tail0-1:BLUESHIFT_PERSISTENT_QKV_TAIL=0 "old2@$OLD:" tail0-2:BLUESHIFT_PERSISTENT_QKV_TAIL=0) ;;
  esac
  timeout 150 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m "${v[@]}"
  stamp $cfg
  tar -C /tmp -cJf $OUT/j4.tar.xz o
done
# Where the time goes (the new tree's defaults): 1B and 8B q4_k_m.
for cfg in llama-3.2-1b llama-3.1-8b; do
  left=$(( 470 - ($(date +%s) - t0) ))
  [ $left -lt 60 ] && break
  w=/tmp/ph-$cfg; mkdir -p $w
  $BS blueshift synth --config benchmarks/configs/$cfg.json $w/hf --seed 1 >/dev/null
  $BS blueshift convert $w/hf $w/m --quant q4_k_m >/dev/null; rm -rf $w/hf
  echo "== $cfg phases"
  timeout $left benchmarks/persistent_phases.sh $BS $w/m 2>&1 | tail -20
  stamp "$cfg phases"; rm -rf $w
done
