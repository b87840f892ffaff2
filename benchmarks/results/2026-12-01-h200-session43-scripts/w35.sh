#!/usr/bin/env bash
# W35 (session 43): W34 again with P1's first task apart (qkv_item, so that the preloaded words are dead past it
# rather than live across all of P1): decode_persistent.comp QKV_EARLY 1 against 0, 1B and 8B q4_k_m (device time),
# 512 + 128, 5 reps, alternated three times.
# Predicted: registers back to ~107-110 (1B) and 95 without spill (8B); then 1B +0.5..+1.5%, 8B +0.5..+1.0% (W34: the
# 3B, at 127 registers without spill, +1.0%). Logits identical (the same words, loaded earlier).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w35 $OUT
V="e1: e0:BLUESHIFT_PERSISTENT_QKV_EARLY=0"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w35/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m: registers"
  bash benchmarks/kernel_registers.sh $BS /tmp/m/m e0:BLUESHIFT_PERSISTENT_QKV_EARLY=0 2>&1 | tee $o/regs.txt
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: 512 + 128, 5 reps"
  for r in a b c; do
    for v in $V; do
      ab_variant $BS "$v"
      ab_bench $o $ab_name-$r $ab_run /tmp/m/m 512 128 5 "${ab_env[@]}"
    done
  done
  for v in $V; do
    ab_variant $BS "$v"; ab_ids $o/ids-$ab_name.txt $ab_run /tmp/m/m "${ab_env[@]}"
  done
  cmp -s $o/ids-e0.txt $o/ids-e1.txt && echo "ids (--deterministic): same" || echo "ids: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w35.tar.xz w35
done
