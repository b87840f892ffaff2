#!/usr/bin/env bash
# J5: the driver's register counts for the persistent kernel at 384 and 512 wide (qwen2.5-1.5b, the 1B), and a short
# decode at each: does qwen's -11% at 512 (J2) come with a register cap the 1B does not hit? Tree 1eb63a4.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
for cfg in qwen2.5-1.5b llama-3.2-1b; do
  w=/tmp/r-$cfg; mkdir -p $w
  $BS blueshift synth --config benchmarks/configs/$cfg.json $w/hf --seed 1 >/dev/null
  $BS blueshift convert $w/hf $w/m --quant q4_k_m >/dev/null; rm -rf $w/hf
  for wg in 384 512; do
    for team in 1 2; do
      BLUESHIFT_PIPELINE_STATS=1 BLUESHIFT_PERSISTENT_WG=$wg BLUESHIFT_PERSISTENT_TEAM=$team timeout 60 $BS blueshift bench \
        --model $w/m --prompt-tokens 64 --gen-tokens 64 --reps 3 --json > $w/b.json 2> $w/err.txt
      echo "$cfg wg $wg team $team: $(python3 -c "import json; d=json.load(open('$w/b.json')); print(round(d['decode_tok_s'],1), 'tok/s')")"
      grep "pipeline-stats decode_persistent" $w/err.txt | head -2 || grep -m3 "pipeline-stats" $w/err.txt
    done
  done
  rm -rf $w
done
