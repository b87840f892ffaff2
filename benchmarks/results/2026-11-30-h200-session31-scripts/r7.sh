#!/usr/bin/env bash
# R7 (session 31): QKV_TEAM, teams of subgroups sharing a q/k/v task's columns (add_matvec's TEAM scheme, in P1).
# $BS = 81da4c9 + QKV_TEAM (default 1), $OLD = 81da4c9. The 8B's P1 is 3,072 tasks of 4 steps on 2,640 subgroups: 2
# rounds, 8 dependent steps, the second round on 16% of them (P1 0.332 ms a step at 16 + 32, R6); at QKV_TEAM 2 6,144
# half tasks of 2 steps, 3 rounds (6 steps) and a workgroup barrier each; at 4, 5 rounds of 1 step.
# Predicted: 8B QKV_TEAM 2 +2-3% (P1 -0.06-0.08 ms), 4 about as 2; QKV_TEAM 1 = $OLD within 0.3%; the 1B (1,536 tasks
# of 2 steps on 2,112 subgroups: one round already) -0.5-1% at 2. Registers unchanged. Logits (fold off) 1e-6-level.
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
for cfg in llama-3.1-8b llama-3.2-1b; do
  rm -rf /tmp/m/*; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  benchmarks/kernel_registers.sh $BS /tmp/m/m t2:BLUESHIFT_PERSISTENT_QKV_TEAM=2
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null
  run t1 $BS 512 128 5 BLUESHIFT_PERSISTENT_QKV_TEAM=1
  run t2 $BS 512 128 5 BLUESHIFT_PERSISTENT_QKV_TEAM=2
  run old $OLD 512 128 5 X=1
  if [ $cfg = llama-3.1-8b ]; then
    run t4 $BS 512 128 5 BLUESHIFT_PERSISTENT_QKV_TEAM=4
    run t2-16+32 $BS 16 32 3 BLUESHIFT_PERSISTENT_QKV_TEAM=2
    run t1-16+32 $BS 16 32 3 BLUESHIFT_PERSISTENT_QKV_TEAM=1
  fi
  run t2-again $BS 512 128 5 BLUESHIFT_PERSISTENT_QKV_TEAM=2
  run t1-again $BS 512 128 5 BLUESHIFT_PERSISTENT_QKV_TEAM=1
  stamp $cfg
  tar -C /tmp -cJf $OUT/r7.tar.xz o
done
benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m t1:BLUESHIFT_PERSISTENT_FOLD_O=0 t2:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_QKV_TEAM=2
stamp logits
