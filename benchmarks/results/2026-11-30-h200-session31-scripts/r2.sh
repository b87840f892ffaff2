#!/usr/bin/env bash
# R2 (session 31): FLOW (the down projection's column passes each wait for their own columns of h; no grid barrier
# between gate/up and down). $BS = HEAD + FLOW, $OLD = HEAD (be6c534). Registers at each model's width; bench 512 +
# 128 medians of 5 and 16 + 32 medians of 3: FLOW 1 (default), FLOW 0, HEAD, FLOW 1 again; logits with the fold off
# (bitwise reproducible): FLOW 1 against FLOW 0, 200 steps.
# Predicted: no spill; 8B +1-1.5% (R1's upper bound for this barrier +2.6%), 1B +1-2% (upper bound +3.5%); FLOW 0 =
# HEAD within 0.3%; logits identical (0 rel L2).
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
  benchmarks/kernel_registers.sh $BS /tmp/m/m flow0:BLUESHIFT_PERSISTENT_FLOW=0
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null
  run 512+128-flow $BS 512 128 5 BLUESHIFT_PERSISTENT_FLOW=1
  run 512+128-flow0 $BS 512 128 5 BLUESHIFT_PERSISTENT_FLOW=0
  run 512+128-head $OLD 512 128 5 X=1
  run 512+128-flow-again $BS 512 128 5 BLUESHIFT_PERSISTENT_FLOW=1
  run 16+32-flow $BS 16 32 3 BLUESHIFT_PERSISTENT_FLOW=1
  run 16+32-flow0 $BS 16 32 3 BLUESHIFT_PERSISTENT_FLOW=0
  stamp $cfg
  tar -C /tmp -cJf $OUT/r2.tar.xz o
done
for cfg in llama-3.2-1b llama-3.1-8b; do
  benchmarks/logits_ab.sh $BS $cfg q4_k_m flow0:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_FLOW=0 \
    flow1:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_FLOW=1
  stamp logits $cfg
done
