#!/usr/bin/env bash
# R3 (session 31). (a) The two twins session 30 left, merged: count_in / await_word under grid_arrive, grid_wait,
# group_arrive and group_wait, and q4k_part16 (one Q4_K part against two f16 slots) under q4k_math's f16 form and the
# fold's q4k_row_block. $BS = that tree, $OLD = HEAD (be6c534). Predicted: registers unchanged (1B 112, 8B 96, no
# spill), tok/s within 0.3%, logits with the fold off identical.
# (b) Why R2's FLOW lost: .dev/carry3 = HEAD + flow.patch, FLOW 1 (R2's form), 2 (the subgroups' fence at workgroup
# scope, the workgroup's last arrival fenced at device scope), 3 (every subgroup's arrival a device atomic on the
# pass's word: no shared counter), 0. Predicted: if the device-scope fence in the gate/up stream is the cost, FLOW 2
# and 3 (3 keeps the fence) split it: 2 recovers to >= FLOW 0, 3 stays at FLOW 1.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/bsflow && tar -C /tmp/bsflow -xJf .dev/carry3/bundle-flow.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsflow/bundle/
FL=/tmp/bsflow/bundle/run
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
  echo "new:"; benchmarks/kernel_registers.sh $BS /tmp/m/m nofold:BLUESHIFT_PERSISTENT_FOLD_O=0
  echo "head:"; benchmarks/kernel_registers.sh $OLD /tmp/m/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null
  run merged $BS 512 128 5 X=1
  run head $OLD 512 128 5 X=1
  for f in 1 2 3 0; do run flow$f $FL 512 128 5 BLUESHIFT_PERSISTENT_FLOW=$f; done
  run merged-again $BS 512 128 5 X=1
  run head-again $OLD 512 128 5 X=1
  stamp $cfg
  tar -C /tmp -cJf $OUT/r3.tar.xz o
done
benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m head@$OLD:BLUESHIFT_PERSISTENT_FOLD_O=0 merged:BLUESHIFT_PERSISTENT_FOLD_O=0 \
  flow2@$FL:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_FLOW=2 flow3@$FL:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_FLOW=3
stamp logits
