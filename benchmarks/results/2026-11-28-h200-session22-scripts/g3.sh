#!/usr/bin/env bash
# Session 22, G3: Q4_K rows on packed f16 arithmetic in the persistent kernel (decode_persistent_h16,
# BLUESHIFT_Q4K_DOT=half) against the float form. Carry .gl and .dev/carry. ~6 minutes.
# G2's PROBE 16 (half the float form's dequantization and dot products skipped) took 1B 0.804 -> 0.720 ms and
# 8B 3.330 -> 2.818 ms a step. The f16 form cuts the row math per part from ~150 instructions to ~80 (13 a word of
# 8 weights against 26, and half the x reads), a bit more than PROBE 16's cut (~52).
# Predicted: 1B kernel -0.10 ms (+12% decode), 8B -0.6 ms (+20%), if its staging (an f16 copy of x per phase,
# each workgroup for itself) costs under 0.02 / 0.06 ms.
# First the logits of half and int against float over 200 decode positions on the 1B q4_k_m.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(200)))")
$BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/base.npy --step >/dev/null
$BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/pre.npy >/dev/null
python3 benchmarks/logits_diff.py /tmp/pre.npy /tmp/base.npy --label "float decode vs prefill"
for d in half int; do
  BLUESHIFT_Q4K_DOT=$d $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/$d.npy --step >/dev/null
  python3 benchmarks/logits_diff.py /tmp/base.npy /tmp/$d.npy --label "$d vs float decode"
  python3 benchmarks/logits_diff.py /tmp/pre.npy /tmp/$d.npy --label "$d decode vs prefill"
done
rm -rf /tmp/mq
stamp logits
for s in 3.2-1b 3.1-8b; do
  timeout 220 benchmarks/decode_ab.sh $BS /tmp/o llama-$s q4_k_m half:BLUESHIFT_Q4K_DOT=half int:BLUESHIFT_Q4K_DOT=int \
    half2:BLUESHIFT_Q4K_DOT=half
  stamp $s
  tar -C /tmp -cJf $OUT/g3.tar.xz o
done
