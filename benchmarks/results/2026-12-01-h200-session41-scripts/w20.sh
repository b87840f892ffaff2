#!/usr/bin/env bash
# W20: the final tree's defaults (no BLUESHIFT_LONG_DECODE_FROM but in the "never" rows): bench reports where the
# long recording starts (decode_kernel.long_context_from), and the default rows replay it past there.
# Predicted: long_context_from 1B q4_k_m 3072, 8B q4_k_m 4096, 1B f16 2048. Default against never: 512 + 128 even;
# 1B q4_k_m 3,072 +3% (W19 +3.3%); 8B q4_k_m 3,072 even (default = never there); 1B f16 2,048 +6% (W18 +6.4%).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w20 $OUT
F=BLUESHIFT_LONG_DECODE_FROM
for mq in llama-3.2-1b:q4_k_m:3072 llama-3.2-1b:f16:2048 llama-3.1-8b:q4_k_m:3072; do
  IFS=: read -r cfg q P <<< "$mq"
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json $q /tmp/m
  o=/tmp/w20/$cfg-$q; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg $q: long_context_from $(python3 -c "import json; print(json.load(open('$o/warm.json'))['decode_kernel']['long_context_from'])")"
  ab_bench $o p512_never $BS /tmp/m/m 512 128 5 $F=0
  ab_bench $o p512_default $BS /tmp/m/m 512 128 5
  ab_bench $o p${P}_never $BS /tmp/m/m $P 128 3 $F=0
  ab_bench $o p${P}_default $BS /tmp/m/m $P 128 3
  stamp "$cfg $q done"
  tar -C /tmp -cJf $OUT/w20.tar.xz w20
done
