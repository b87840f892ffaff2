#!/usr/bin/env bash
# R7 (session 32). R6's spec constant left dot2's Q6_K slot branch compiled in (only the P5 decision was gated): the 1B
# still ran 1,220 against 8d955b3's 1,230 with 112 registers. $BS = the branch gated by Q6K_SLOTS too, $OLD = 8d955b3,
# $R5 = 28c2b20. Predicted: 1B as 8d955b3 (111 registers, ~1,230 tok/s); 8B as 28c2b20 (~348 tok/s). Short on device
# time: the 1B twice, the 8B once.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/bsr5 && tar -C /tmp/bsr5 -xJf .dev/carry3/bundle-r5.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsr5/bundle/
R5=/tmp/bsr5/bundle/run
mkdir -p /tmp/r7
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  if [ $cfg = llama-3.2-1b ]; then ref=old; R=$OLD; n=2; else ref=r5; R=$R5; n=1; fi
  echo "new:"; benchmarks/kernel_registers.sh $BS /tmp/m/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r7/$cfg-warm.json
  for i in $(seq $n); do
    ab_bench /tmp/r7 $cfg-$ref$i $R /tmp/m/m 512 128 5
    ab_bench /tmp/r7 $cfg-new$i $BS /tmp/m/m 512 128 5
  done
  stamp $cfg
  tar -C /tmp -cJf $OUT/r7.tar.xz r7
done
