#!/usr/bin/env bash
# K1: the gate/up phase's Q4_K tasks as one stream of steps a subgroup (STREAM, spec constant 12): the next task's first
# loads issued in the last step of the task before, where dot2 starts each task with nothing in flight.
#   new = 1bac30f + the stream (.dev/carry/bundle.tar.xz); old = a663ea0's kernels = 1bac30f's ($OLD)
# Predicted: 1B q4_k_m +3-4% (2 steps a task: one cold start in 3 steps gone), 8B +3% (4 steps a task), qwen2.5-1.5b
# and 3B between. STREAM=0 equal to old (the same code after the refactor). Logits identical to old (same sums).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
timeout 60 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m "old@$OLD:" new: s0:BLUESHIFT_PERSISTENT_STREAM=0
stamp logits
for cfg in llama-3.2-1b llama-3.1-8b qwen2.5-1.5b llama-3.2-3b; do
  case $cfg in
    llama-3.2-1b|llama-3.1-8b) v=("old1@$OLD:" s0:BLUESHIFT_PERSISTENT_STREAM=0 "old2@$OLD:" s1:) ;;
    *) v=("old1@$OLD:") ;;
  esac
  timeout 150 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m "${v[@]}"
  stamp $cfg
  tar -C /tmp -cJf $OUT/k1.tar.xz o
done
