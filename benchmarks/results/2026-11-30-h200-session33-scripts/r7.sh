#!/usr/bin/env bash
# R7 (session 33, tree 271cd70): the output norm at the persistent kernel's end (HEAD_Q8X: a last
# grid barrier, then the workgroups holding slots norm x into the Q6_K head's int8 form) against its own dispatch
# (BLUESHIFT_PERSISTENT_HEAD_NORM=0: rms_norm_q8x after the kernel), 512 + 128, medians of 5, twice each; logits (fold
# off) of the two on the 1B and 8B.
# Count (R6): leaving the norm's dispatch out saved 11.4 us a token on the 1B, 16 on the 8B; a grid barrier costs
# ~1.5-2 us and one workgroup's norm of 2,048-4,096 values ~2 us. Predicted: 1B -6 to -8 us (1,281 -> ~1,292 tok/s,
# +0.9%), 8B -11 us (351.5 -> ~352.9, +0.4%); the kernel's own time +3-4 us. Logits at ~1e-7 (the same sums but the
# sum of squares in another order), top-1 100%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r7
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r7/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r7 $cfg-dispatch$i $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_HEAD_NORM=0
    ab_bench /tmp/r7 $cfg-inkernel$i $BS /tmp/m/m 512 128 5
  done
  stamp $cfg
  tar -C /tmp -cJf $OUT/r7.tar.xz r7
done
for cfg in llama-3.2-1b llama-3.1-8b; do
  benchmarks/logits_ab.sh $BS $cfg q4_k_m dispatch:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_HEAD_NORM=0 \
    inkernel:BLUESHIFT_PERSISTENT_FOLD_O=0 | grep -v wrote
done
stamp logits
