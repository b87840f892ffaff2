#!/usr/bin/env bash
# R4 (session 31). (a) R3's merged twins, split: $BS = HEAD + count_in / await_word alone (the grid and group
# barriers' halves), $OLD = HEAD; alternated twice, 512 + 128 medians of 5. Predicted: even within 0.3% (R3's 1B loss
# of 0.9% came from q4k_part16 in the matvecs' hot loop, not from the barrier code), registers as HEAD's.
# (b) The persistent kernel's shape settings again now that the o projection is folded (defaults: 1B 512 wide, TEAM 2,
# 4 chunks a head, 16 parts a head group; 8B 640 wide, 4 chunks, 8 parts). Predicted: none better by more than 0.5%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
rm -rf /tmp/o /tmp/m; mkdir -p /tmp/o /tmp/m
show() {
  python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); k=[v for n,v in d['gpu_ms_by_dispatch'].items() if n.startswith('decode_persistent')]
print(f'{sys.argv[2]:36s}', f\"decode {d['decode_tok_s']:7.1f} tok/s, decode_persistent {k[0]:.4f} ms a step\")" "$1" "$2"
}
run() {  # NAME RUNNER PROMPT GEN REPS ENV...
  local name=$1 r=$2 pr=$3 g=$4 n=$5; shift 5
  env "$@" timeout 60 $r blueshift bench --model /tmp/m/m --prompt-tokens $pr --gen-tokens $g --reps $n --json \
    > /tmp/o/$cfg-$name.json && show /tmp/o/$cfg-$name.json "$cfg $name"
}
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m/*; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  echo "count_in:"; benchmarks/kernel_registers.sh $BS /tmp/m/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null
  for i in 1 2; do run count_in$i $BS 512 128 5 X=1; run head$i $OLD 512 128 5 X=1; done
  if [ $cfg = llama-3.2-1b ]; then
    sweep="WG=384 WG=640 TEAM=1 SPLITS=2 SPLITS=8 FOLD_PARTS=8 FOLD_PARTS=32"
  else
    sweep="SPLITS=2 SPLITS=8 FOLD_PARTS=4 FOLD_PARTS=16"
  fi
  for s in $sweep; do run $s $BS 512 128 5 BLUESHIFT_PERSISTENT_$s; done
  run count_in3 $BS 512 128 5 X=1
  stamp $cfg
  tar -C /tmp -cJf $OUT/r4.tar.xz o
done
