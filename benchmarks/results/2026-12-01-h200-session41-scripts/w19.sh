#!/usr/bin/env bash
# W19: the persistent threshold (3,072, set from W18's crossings) checked at 3,072 + 128, and the long recording at
# 8,192 + 128. Same bundle as W18 (whose persistent default was 2,048; every row here sets BLUESHIFT_LONG_DECODE_FROM).
# Predicted: q4_k_m at 3,072: 1B -1..0%, 8B +1..+2%. At 8,192: 1B q4_k_m +5-8%, 1B f16 +25-30% (the grouped form's
# gain grows with the plain grid's waves).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w19 $OUT
F=BLUESHIFT_LONG_DECODE_FROM
run() {  # MODEL-QUANT PROMPT...
  local o=/tmp/w19/$1; shift; mkdir -p $o
  for P in "$@"; do
    ab_bench $o p${P}_never $BS /tmp/m/m $P 128 3 $F=0
    ab_bench $o p${P}_long $BS /tmp/m/m $P 128 3 $F=1
  done
}
for mq in llama-3.2-1b:q4_k_m:3072,8192 llama-3.2-1b:f16:8192 llama-3.1-8b:q4_k_m:3072; do
  IFS=: read -r cfg q ps <<< "$mq"
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json $q /tmp/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg $q"
  run $cfg-$q ${ps//,/ }
  stamp "$cfg $q done"
  tar -C /tmp -cJf $OUT/w19.tar.xz w19
done
