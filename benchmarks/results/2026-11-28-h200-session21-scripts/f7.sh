#!/usr/bin/env bash
# Session 21, F7: is F6's 8B q4_k_m decode-vs-prefill gap (worst 1.58e-2, top-1 92% over 100 positions) this
# session's? The same 100 positions' decode logits from the tree before the session's persistent changes (a774297,
# MERGE 0), from this tree, and from this tree's per-phase decode (BLUESHIFT_NO_PERSISTENT=1). Predicted: old and new
# within ~1e-4 (only the down passes' sum order and the merge's differ), the per-phase path within ~1e-3 of both.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsold && tar -C /tmp/bsold -xJf .dev/carry2/bundle-old.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsold/bundle/
OLD=/tmp/bsold/bundle/run
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(100)))")
$OLD blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/old.npy --step >/dev/null
$BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/new.npy --step >/dev/null
BLUESHIFT_NO_PERSISTENT=1 $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/phase.npy --step >/dev/null
python3 benchmarks/logits_diff.py /tmp/old.npy /tmp/new.npy --label "8B q4_k_m decode, a774297 vs this tree"
python3 benchmarks/logits_diff.py /tmp/phase.npy /tmp/new.npy --label "8B q4_k_m decode, per-phase vs persistent"
