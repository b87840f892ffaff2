#!/usr/bin/env bash
# R2 (session 32). Two trees on R1's (a71b618 = $OLD):
#   A ($AA, .dev/carry3): a down projection that is not Q4_K takes its floats over the whole shared array too (sx_at0 =
#     0 in P5): the 8B's Q6_K downs in 2 passes instead of 3 (8504 floats), the 1B's in 1 instead of 2 (9124).
#   B ($BS): A, with stage_slots loading two slots an invocation at once (the 8B's 896 slots on 640 invocations: one
#     round trip to L2 instead of two; the 1B's 512 on 512 already take one).
# Predicted, kernel ms a step against $OLD: A 8B -0.8% (16 Q6_K layers, 1 pass saved each at R1's ~1.45 us a pass),
# 1B -0.6%; B a further 8B -0.4%, 1B even. Registers unchanged (1B 111, 8B 96, no spill). Logits with the fold off: A
# against OLD at the h16 reorder level (Q6_K rows' passes regrouped; ~1e-3), B against A identical.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/bsa && tar -C /tmp/bsa -xJf .dev/carry3/bundle-a.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsa/bundle/
AA=/tmp/bsa/bundle/run
mkdir -p /tmp/r2
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  for t in old:$OLD a:$AA b:$BS; do echo "${t%%:*}:"; benchmarks/kernel_registers.sh ${t#*:} /tmp/m/m; done
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r2/$cfg-warm.json
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['decode_kernel'])" /tmp/r2/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r2 $cfg-old$i $OLD /tmp/m/m 512 128 5
    ab_bench /tmp/r2 $cfg-a$i $AA /tmp/m/m 512 128 5
    ab_bench /tmp/r2 $cfg-b$i $BS /tmp/m/m 512 128 5
  done
  stamp $cfg
done
benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m old@$OLD:BLUESHIFT_PERSISTENT_FOLD_O=0 a@$AA:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  b:BLUESHIFT_PERSISTENT_FOLD_O=0
benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m a@$AA:BLUESHIFT_PERSISTENT_FOLD_O=0 b:BLUESHIFT_PERSISTENT_FOLD_O=0
stamp logits
tar -C /tmp -cJf $OUT/r2.tar.xz r2
