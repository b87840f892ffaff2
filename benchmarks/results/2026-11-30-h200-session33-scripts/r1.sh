#!/usr/bin/env bash
# R1 (session 33): session 32's R7 and R8 in one call.
# R7: $BS = b1402a7 (c0975c2's kernels: dot2's Q6_K slot branch gated by the spec constant Q6K_SLOTS), $OLD = 8d955b3,
#     $R5 = 28c2b20. Predicted: the 1B as 8d955b3 (111 registers, ~1,230 tok/s), the 8B as 28c2b20 (~348 tok/s).
# R8: $SW = b1402a7 + ../2026-11-30-h200-session32-scripts/switches.patch (.dev/carry4/bundle-sw.tar.xz), two
#     switches, both off by default:
#     NORM_SLOTS (RMSNorm straight into the f16 slots where a phase is all Q4_K): predicted 8B kernel -0.3 to -0.6%,
#     1B -0.3 to -0.5%. Q6K_ROT (q6k_dot2's bank-conflicting lanes take their quarters in the order qq ^ 2): predicted
#     1B -0.3 to -1%, 8B -0.3 to -0.6%. Logits (fold off) at the h16 reorder level.
# Carries .gl, .dev/carry, .dev/carry2, .dev/carry3, .dev/carry4.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/bsr5 /tmp/bssw
tar -C /tmp/bsr5 -xJf .dev/carry3/bundle-r5.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsr5/bundle/
tar -C /tmp/bssw -xJf .dev/carry4/bundle-sw.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bssw/bundle/
R5=/tmp/bsr5/bundle/run
SW=/tmp/bssw/bundle/run
mkdir -p /tmp/r1
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  if [ $cfg = llama-3.2-1b ]; then ref=old; R=$OLD; else ref=r5; R=$R5; fi
  echo "$cfg registers, new:"; benchmarks/kernel_registers.sh $BS /tmp/m/m
  echo "$cfg registers, $ref:"; benchmarks/kernel_registers.sh $R /tmp/m/m
  echo "$cfg registers, switches:"
  benchmarks/kernel_registers.sh $SW /tmp/m/m ns:BLUESHIFT_PERSISTENT_NORM_SLOTS=1 rot:BLUESHIFT_PERSISTENT_Q6K_ROT=1
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r1/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r1 $cfg-$ref$i $R /tmp/m/m 512 128 5
    ab_bench /tmp/r1 $cfg-new$i $BS /tmp/m/m 512 128 5
    ab_bench /tmp/r1 $cfg-off$i $SW /tmp/m/m 512 128 5
    ab_bench /tmp/r1 $cfg-ns$i $SW /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_NORM_SLOTS=1
    ab_bench /tmp/r1 $cfg-rot$i $SW /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_Q6K_ROT=1
  done
  stamp $cfg
  tar -C /tmp -cJf $OUT/r1.tar.xz r1
done
benchmarks/logits_ab.sh $SW llama-3.2-1b q4_k_m off:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  ns:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_NORM_SLOTS=1 \
  rot:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_Q6K_ROT=1 | grep -v wrote
stamp logits
tar -C /tmp -cJf $OUT/r1.tar.xz r1
