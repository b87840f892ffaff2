#!/usr/bin/env bash
# W31 (session 43): the norms' staging taken apart (decode_persistent.comp PROBE 32-256, new): kernel ms a step with
# everything else kept, 16-token prompt, 64 tokens, 3 reps (persistent_phases.sh's setting), two rounds alternated.
# W28 had the norms' staging at 0.169 ms a step on the 8B (64 stagings: 2.6 us each) and 0.059 on the 1B (32: 1.8 us),
# measured with no phase work around it; SKIP=128 here measures it inside the full kernel.
# Count (8B, stage_norm_slots): 256 of 640 invocations load 4 vec4 of x (L2, coherent) and 4 of the weights (L2), one
# round trip ~0.7-0.8 us; workgroup_sum ~0.3 us (two barriers, 20 shared reads); slot_put and a barrier ~0.2 us.
# Predicted, ms a step saved against base (8B / 1B): SKIP=128 0.12-0.17 / 0.04-0.06; PROBE 32 (no x loads) 0.03-0.05 /
# 0.01-0.02 (the weights' loads still make the round trip: only what x adds beyond them); PROBE 64 (no reduction)
# 0.015-0.025 / 0.007-0.012; PROBE 128 (P1's alone) > PROBE 256 (P4's, behind EARLY's loads), ~60 / 40 of SKIP=128.
# Carry .gl, .dev/carry (85f55ff + the PROBE bits).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w31 $OUT
V="base: skip128:BLUESHIFT_PERSISTENT_SKIP=128 p32:BLUESHIFT_PERSISTENT_PROBE=32 p64:BLUESHIFT_PERSISTENT_PROBE=64
p96:BLUESHIFT_PERSISTENT_PROBE=96 p128:BLUESHIFT_PERSISTENT_PROBE=128 p256:BLUESHIFT_PERSISTENT_PROBE=256"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w31/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m: registers"
  bash benchmarks/kernel_registers.sh $BS /tmp/m/m p96:BLUESHIFT_PERSISTENT_PROBE=96 2>&1 | tee $o/regs.txt
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: 16 + 64, 3 reps"
  for r in a b; do
    for v in $V; do
      ab_variant $BS "$v"
      ab_bench $o $ab_name-$r $ab_run /tmp/m/m 16 64 3 "${ab_env[@]}"
    done
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w31.tar.xz w31
done
