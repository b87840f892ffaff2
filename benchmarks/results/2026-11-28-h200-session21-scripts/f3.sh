#!/usr/bin/env bash
# Session 21, F3: the persistent kernel's attention merge (BLUESHIFT_PERSISTENT_MERGE). 0 (today): one invocation a
# head reduces its (m, l) pairs into weights in shared memory (its loads a serial chain), a barrier, then each element
# sums its partials; 1: each element loads its head's m, l and its partials together and folds them in online (one
# round trip, no barrier); 2: as 1, two elements an invocation. F1 took the same step in attention_split (+1.0% on the
# 1B f16). Predicted: -1..-2 us a layer: 1B q4_k_m +1.5-3%, 8B q4_k_m +1-2%; 2 above 1 by ~1%. First HF parity at
# the new defaults (the merge with no barrier in attention_split) and each MERGE's decode logits against the prefill
# path's over 600 positions; then decode_ab.sh on each model, two rounds.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(600)))")
$BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/prefill.npy >/dev/null
for m in 0 1 2; do
  BLUESHIFT_PERSISTENT_MERGE=$m $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/m$m.npy --step >/dev/null
  python3 benchmarks/logits_diff.py /tmp/prefill.npy /tmp/m$m.npy --label "MERGE $m"
done
rm -rf /tmp/mq
stamp logits
v=()
for i in a b; do for m in 1 2; do v+=("merge$m$i:BLUESHIFT_PERSISTENT_MERGE=$m"); done; done
for s in 3.2-1b 3.1-8b; do
  timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-$s q4_k_m "${v[@]}"
  stamp $s
  tar -C /tmp -cJf $OUT/f3.tar.xz o
done
