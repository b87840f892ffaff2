#!/usr/bin/env bash
# Prepared in session 21 for the next session (not run: no device time left). Carry .gl and .dev/carry (rebuild the
# bundle first). ~5 minutes.
# BLUESHIFT_PERSISTENT_ROWS4=1 (the commit after 0fe712e): the persistent kernel's gate/up, o and down tasks take four
# rows instead of two. Q4_K rows share each part's x reads (8 vec4s from shared memory) four ways instead of two, and
# one quad_sum butterfly (9 exchanges) replaces two pair_sums (12) for four rows; the task loop's bookkeeping halves.
# A lane's loads a step stay at eight uvec4s with PARTS 1 (four rows x one part), as today at two rows x PARTS 2.
# Session 18's C1 probes: staged x reads 6.3% (1B) / 11.2% (8B) of the kernel, the reductions 3.1% / 3.0%.
# Predicted: half the x share and a quarter of the reductions: 1B q4_k_m +2-4%, 8B +4-6% at PARTS 1. PARTS 2 (sixteen
# uvec4s a lane) likely loses on registers, as every register-raising change since session 11 has. If ROWS4 loses at
# PARTS 1 too, look at the registers (the pipeline statistics, BLUESHIFT_PIPELINE_STATS=1 on a bench run) before
# concluding that the task's fixed chain is not what it costs.
# The base rows also check the commit that gave dot2 and dot4 one Q4_K part (q4k_x, q4k_dot; its SPIR-V differs by
# selects on the PROBE spec constant that specialization folds away): expected at F6's 975.9 (1B) and 271.9 (8B).
# First each variant's decode logits against the default's (identical sums but for the order: ~1e-5), then
# decode_ab.sh on each model, two rounds.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(200)))")
$BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/base.npy --step >/dev/null
for parts in 1 2; do
  BLUESHIFT_PERSISTENT_ROWS4=1 BLUESHIFT_PERSISTENT_PARTS=$parts $BS blueshift logits --model /tmp/mq --tokens "$toks" \
    --out /tmp/r4p$parts.npy --step >/dev/null
  python3 benchmarks/logits_diff.py /tmp/base.npy /tmp/r4p$parts.npy --label "ROWS4 PARTS $parts vs default"
done
rm -rf /tmp/mq
stamp logits
v=()
for i in a b; do v+=("rows4p1$i:BLUESHIFT_PERSISTENT_ROWS4=1,BLUESHIFT_PERSISTENT_PARTS=1" "rows4p2$i:BLUESHIFT_PERSISTENT_ROWS4=1"); done
for s in 3.2-1b 3.1-8b; do
  timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-$s q4_k_m "${v[@]}"
  stamp $s
  tar -C /tmp -cJf $OUT/g1.tar.xz o
done
