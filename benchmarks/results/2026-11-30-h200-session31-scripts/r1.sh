#!/usr/bin/env bash
# R1 (session 31). (a) session 30's Q7: 7d30ca3's grid-wide o tasks, the fold against no fold at 16 + 32 and at
# 512 + 128 (bench medians of 3). Predicted: short context fold <= no fold (8B ~2.80 ms a step against 3.065 before
# 7d30ca3), long context as session 30's Q4 (8B ~336, 1B ~1,213 tok/s).
# (b) what a grid barrier a layer is worth at most: $OLD is HEAD with nobar.patch, beside this script (p.skip bit 7
# drops the q/k/v -> attention grid barrier, bit 8 the gate/up -> down one; racy: wrong logits, timing only), 512 + 128.
# Predicted: each barrier dropped +2-4% (8B), +3-5% (1B); the upper bound on what a dataflow form of it could give.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
rm -rf /tmp/o /tmp/m; mkdir -p /tmp/o /tmp/m
show() {
  python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); k=[v for n,v in d['gpu_ms_by_dispatch'].items() if n.startswith('decode_persistent')]
print(f'{sys.argv[2]:40s}', f\"decode {d['decode_tok_s']:7.1f} tok/s, decode_persistent {k[0]:.4f} ms a step\")" "$1" "$2"
}
run() {  # NAME RUNNER PROMPT GEN ENV...
  local name=$1 r=$2 pr=$3 g=$4; shift 4
  env "$@" timeout 60 $r blueshift bench --model /tmp/m/m --prompt-tokens $pr --gen-tokens $g --reps 3 --json \
    > /tmp/o/$cfg-$name.json && show /tmp/o/$cfg-$name.json "$cfg $name"
}
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m/*; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null
  for pg in 16:32 512:128; do
    run ${pg/:/+}-fold $BS ${pg%%:*} ${pg##*:} BLUESHIFT_PERSISTENT_FOLD_O=1
    run ${pg/:/+}-nofold $BS ${pg%%:*} ${pg##*:} BLUESHIFT_PERSISTENT_FOLD_O=0
  done
  for s in 0 128 256 384 0; do run 512+128-nobar$s $OLD 512 128 BLUESHIFT_PERSISTENT_SKIP=$s; done
  run 512+128-fold-again $BS 512 128 BLUESHIFT_PERSISTENT_FOLD_O=1
  stamp $cfg
  tar -C /tmp -cJf $OUT/r1.tar.xz o
done
