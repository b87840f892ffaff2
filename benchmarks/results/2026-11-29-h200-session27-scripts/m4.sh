#!/usr/bin/env bash
# M4: the landed form against the session's starting tree (f23404d, $OLD): stage_attention with one element an
# invocation, and 640 wide above hidden size 2048 where it takes gate/up in fewer rounds (the 8B; not the 3B).
# Predicted: 8B +5.9% (M3's e1_640), the 1B and 3B even; logits identical on the 1B and 3B (same width, same
# arithmetic), the 8B's within the width change's reordering (M2's 1B wg640: 6.3e-3 worst rel L2).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
. benchmarks/ab_common.sh
for cfg in llama-3.2-1b llama-3.1-8b; do
  ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/st-$cfg
  for w in "" 512 640; do
    r=$(env ${w:+BLUESHIFT_PERSISTENT_WG=$w} BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/st-$cfg/m \
      --prompt-tokens 16 --gen-tokens 4 --reps 1 --json 2>&1 >/dev/null | grep -i "decode_persistent" | head -1 |
      sed -E 's/.*Register Count=([0-9]+).*Local Memory Size=([0-9]+).*/\1 \2/')
    set -- $r
    echo "$cfg WG ${w:-default}: registers ${1:-?} spill $(( ${2:-68719476736} - 68719476736 ))"
  done
  rm -rf /tmp/st-$cfg
done | tee /tmp/o/stats.txt
stamp stats
BENCH_WORK=/tmp/lg timeout 100 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m old@$OLD: new: | tee /tmp/o/logits.txt
BENCH_WORK=/tmp/lg timeout 200 benchmarks/logits_ab.sh $BS llama-3.1-8b q4_k_m old@$OLD: new: \
  new512:BLUESHIFT_PERSISTENT_WG=512 | tee -a /tmp/o/logits.txt
stamp logits
timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m old@$OLD:
stamp 8b
tar -C /tmp -cJf $OUT/m4.tar.xz o
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m old@$OLD:
stamp 1b
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m old@$OLD:
stamp 3b
tar -C /tmp -cJf $OUT/m4.tar.xz o
