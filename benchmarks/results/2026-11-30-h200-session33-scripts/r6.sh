#!/usr/bin/env bash
# R6 (session 33): (a) the int8 head's logits through the decode loop's own head: `logits --step` (Model::decode) now
# records the forward as the loop does (logits_only: the output norm with the head), so logits_ab compares the heads
# the loop runs: BLUESHIFT_HEAD_I8=0 (rms_norm_f32, matvec_q6k_wide) against the default (rms_norm_q8x,
# matvec_q6k_wide_i8), fold off. Predicted: rel L2 ~1e-5 (x to ~2^-16 of each 16 values' largest), top-1 100%.
# (b) What a small dispatch costs in the loop: BLUESHIFT_DECODE_SKIP (timing only, wrong logits) leaves out the
# embedding (1) or the output norm (2) or both (3). Their profiled times were ~0.011 ms each on the 1B, and the
# profiled step's sum matched the loop's time a token. Predicted: 1B -10 us a token each (1,281 -> ~1,297 tok/s),
# -20 us both; 8B -15 us each. If so, folding them into the persistent kernel (a grid barrier, ~2 us) pays.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r6
for cfg in llama-3.2-1b llama-3.1-8b; do
  benchmarks/logits_ab.sh $BS $cfg q4_k_m f32:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_HEAD_I8=0 \
    i8:BLUESHIFT_PERSISTENT_FOLD_O=0 | grep -v wrote
done
stamp logits
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r6/$cfg-warm.json
  i=0
  for v in 0 1 2 3 0; do
    i=$((i + 1))
    ab_bench /tmp/r6 $cfg-$i-skip$v $BS /tmp/m/m 512 128 5 BLUESHIFT_DECODE_SKIP=$v
  done
  stamp $cfg
  tar -C /tmp -cJf $OUT/r6.tar.xz r6
done
