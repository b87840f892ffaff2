#!/usr/bin/env bash
# W29 (session 43): the Q4_K loops touching their code parts into L2 D steps ahead (decode_persistent.comp STREAM_TOUCH
# for gate/up's stream, DOT_TOUCH for dot2: q/k/v, o and down), 1B and 8B q4_k_m, 512 + 128, 5 reps, alternated.
# Count: W26's loads-alone run streams the 8B at ~2.5 TB/s inside the phases. With PIPE 1 a lane has one step in flight
# (~36 DRAM bytes); Little's law at ~1.2 us loaded latency wants ~60 for 4.4 TB/s. A touch keeps two more steps' sectors
# in flight for 4 registers.
# Predicted: S3 (gate/up alone) 8B +3..+8% (P4 0.83 ms toward its ~0.5 floor), 1B +1..+4%; D3 (dot2) 8B +2..+5% (down
# 14 steps a task; P1 4 steps), 1B +1..+3%; S3+D3 the sum less a little; S2 less than S3 (one step's lead); registers
# +2..+6, no spill.
# Carry .gl, .dev/carry (the tree with STREAM_TOUCH / DOT_TOUCH, defaults 0).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w29 $OUT
V="base: s2:BLUESHIFT_PERSISTENT_STREAM_TOUCH=2 s3:BLUESHIFT_PERSISTENT_STREAM_TOUCH=3 s4:BLUESHIFT_PERSISTENT_STREAM_TOUCH=4
d3:BLUESHIFT_PERSISTENT_DOT_TOUCH=3 s3d3:BLUESHIFT_PERSISTENT_STREAM_TOUCH=3,BLUESHIFT_PERSISTENT_DOT_TOUCH=3"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w29/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m: registers"
  bash benchmarks/kernel_registers.sh $BS /tmp/m/m $(echo $V | tr ' ' '\n' | grep -v '^base:$') 2>&1 | tee $o/regs.txt
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: 512 + 128, 5 reps"
  for r in a b; do
    for v in $V; do
      ab_variant $BS "$v"
      ab_bench $o $ab_name-$r $ab_run /tmp/m/m 512 128 5 "${ab_env[@]}"
    done
  done
  for v in base: s3d3:BLUESHIFT_PERSISTENT_STREAM_TOUCH=3,BLUESHIFT_PERSISTENT_DOT_TOUCH=3; do
    ab_variant $BS "$v"; ab_ids $o/ids-$ab_name.txt $ab_run /tmp/m/m "${ab_env[@]}"
  done
  cmp -s $o/ids-base.txt $o/ids-s3d3.txt && echo "ids: same" || echo "ids: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w29.tar.xz w29
done
