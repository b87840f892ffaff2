#!/usr/bin/env bash
# Q7 (session 30, 7d30ca3: the fold's o rows shared out over the whole grid): the fold against no fold at a 16-token
# prompt + 32 tokens (short context, where Q6 found the 8B's folded o rows on 32-64 workgroups: 3.065 ms a step against
# 2.848 unfolded) and at 512 + 128, bench medians of 3, decode_persistent's GPU ms a step and tok/s.
# Predicted: at short context the fold now at or below no fold (8B ~2.80 ms); at 512 + 128 as Q4 (8B ~336, 1B ~1,213).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
rm -rf /tmp/o /tmp/m; mkdir -p /tmp/o /tmp/m
show() {
  python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); k=[v for n,v in d['gpu_ms_by_dispatch'].items() if n.startswith('decode_persistent')]
print(sys.argv[2], f\"decode {d['decode_tok_s']:.1f} tok/s, decode_persistent {k[0]:.4f} ms a step\")" "$1" "$2"
}
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m/*; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  for pg in 16:32 512:128; do
    for v in fold:BLUESHIFT_PERSISTENT_FOLD_O=1 nofold:BLUESHIFT_PERSISTENT_FOLD_O=0; do
      f=/tmp/o/$cfg-${pg/:/+}-${v%%:*}.json
      env ${v#*:} timeout 40 $BS blueshift bench --model /tmp/m/m --prompt-tokens ${pg%%:*} --gen-tokens ${pg##*:} \
        --reps 3 --json > $f && show $f "$cfg ${pg/:/+} ${v%%:*}"
    done
  done
  stamp $cfg
  tar -C /tmp -cJf $OUT/q7.tar.xz o
done
