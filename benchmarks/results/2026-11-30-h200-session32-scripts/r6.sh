#!/usr/bin/env bash
# R6 (session 32). R5's 1B ran 1,220 tok/s against 8d955b3's 1,232 (R4), with 113 registers against 111: q6k_dot2's slot
# form, present in P5's code though the 1B never takes it. $BS = a spec constant Q6K_SLOTS that the host sets only where
# a layer takes it (the 8B), $OLD = 8d955b3, $R5 = 28c2b20 (R5's tree).
# Predicted: 1B as 8d955b3 (111 registers, ~1,232 tok/s, kernel ~0.684 ms); 8B as 28c2b20 (~348 tok/s, ~2.745 ms).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/bsr5 && tar -C /tmp/bsr5 -xJf .dev/carry3/bundle-r5.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsr5/bundle/
R5=/tmp/bsr5/bundle/run
mkdir -p /tmp/r6
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  if [ $cfg = llama-3.2-1b ]; then ref=old; R=$OLD; else ref=r5; R=$R5; fi
  for t in $ref:$R new:$BS; do echo "${t%%:*}:"; benchmarks/kernel_registers.sh ${t#*:} /tmp/m/m; done
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r6/$cfg-warm.json
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['decode_kernel'])" /tmp/r6/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r6 $cfg-$ref$i $R /tmp/m/m 512 128 5
    ab_bench /tmp/r6 $cfg-new$i $BS /tmp/m/m 512 128 5
  done
  stamp $cfg
done
tar -C /tmp -cJf $OUT/r6.tar.xz r6
