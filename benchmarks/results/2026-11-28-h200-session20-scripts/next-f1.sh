#!/usr/bin/env bash
# Prepared in session 20 for the next session (not run: no device time left). Carry .gl and .dev/carry (rebuild the
# bundle first). ~7 minutes.
# E6's attention with 5 barriers lost (1B f16 864 -> 790) and its PROBE 7 (no loads, no merge) still cost 0.223 ms
# against 0.148, so the loss was in q's per-invocation global loads, the shuffles or the exps. 280b0cf splits the two
# barrier savings out as FORM bits with q kept in shared memory: 1 = a position's quarters summed by shuffles (two
# barriers a pass less), 2 = the softmax sum at the V barrier, each V invocation weighing its own positions (two
# less); 3780460 adds 4 = the merge with no barrier (every split's m, l and the invocation's partial loaded together
# and folded in online: one round trip and four barriers less than E5's 2.9 us merge). Predicted: FORM 1 -1..-2 us a
# layer, 2 -1 us, 4 -1..-1.5 us, 7 all three: 1B f16 864 -> ~900 (+4%), 8B f16 +1.5%. If 1 or 2 loses, q was not
# E6's culprit. First each form's decode logits against the prefill path over 600 teacher-forced positions (worst
# rel L2 2.71e-3 at FORM 0); then benchmarks/decode_ab.sh on each model in one lease: two rounds of each form between
# its base runs, and PROBE 7 with FORM 0 and 7.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/mf --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(600)))")
$BS blueshift logits --model /tmp/mf --tokens "$toks" --out /tmp/prefill.npy >/dev/null
for f in 0 1 2 4 7; do
  BLUESHIFT_ATTN_FORM=$f $BS blueshift logits --model /tmp/mf --tokens "$toks" --out /tmp/step$f.npy --step >/dev/null
  python3 benchmarks/logits_diff.py /tmp/prefill.npy /tmp/step$f.npy --label "FORM $f"
done
rm -rf /tmp/mf
stamp logits
forms=()
for i in a b; do for f in 1 2 4 7; do forms+=("form$f$i:BLUESHIFT_ATTN_FORM=$f"); done; done
for s in 3.2-1b 3.1-8b; do
  timeout 280 benchmarks/decode_ab.sh $BS /tmp/o llama-$s f16 "${forms[@]}" probe7:BLUESHIFT_ATTN_PROBE=7 \
    form7probe7:BLUESHIFT_ATTN_FORM=7,BLUESHIFT_ATTN_PROBE=7
  stamp $s
  tar -C /tmp -cJf $OUT/f1.tar.xz o
done
