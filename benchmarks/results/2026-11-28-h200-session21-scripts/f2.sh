#!/usr/bin/env bash
# Session 21, F2: the persistent kernel's TOUCH (BLUESHIFT_PERSISTENT_TOUCH=N: the o, gate/up and down phases'
# rows read ahead by up to N one-word loads a lane, issued before the phase's staging, folded after it). Predicted:
# 1B q4_k_m +3-7% at 16-32 (its gate/up phase is six chains of DRAM round trips a subgroup, 15.7 us a layer; its
# 18.9 MB fit the L2), 8B q4_k_m +1-3% (its 66 MB gate/up does not: 16 loads a lane touch half of it). First the
# decode logits with TOUCH 32 against TOUCH 0 (the touch changes no sum: identical). Then decode_ab.sh, two rounds.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(200)))")
for t in 0 32; do
  BLUESHIFT_PERSISTENT_TOUCH=$t $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/t$t.npy --step >/dev/null
done
python3 benchmarks/logits_diff.py /tmp/t0.npy /tmp/t32.npy --label "TOUCH 32 vs 0"
rm -rf /tmp/mq
stamp logits
v=()
for i in a b; do for t in 8 16 32; do v+=("touch$t$i:BLUESHIFT_PERSISTENT_TOUCH=$t"); done; done
for s in 3.2-1b 3.1-8b; do
  timeout 250 benchmarks/decode_ab.sh $BS /tmp/o llama-$s q4_k_m "${v[@]}"
  stamp $s
  tar -C /tmp -cJf $OUT/f2.tar.xz o
done
