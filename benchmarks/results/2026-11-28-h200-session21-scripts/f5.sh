#!/usr/bin/env bash
# Session 21, F5: the final tree (14ef9b0) against the one F4's table ran (a774297 with BLUESHIFT_PERSISTENT_MERGE=2,
# .dev/carry2/bundle-old.tar.xz), one lease, alternating, two rounds. 14ef9b0 folds MERGE 2 in and gives s_w's 4 KiB of
# shared memory to the staging area: the same 1B kernel (its staging already held the 8192-float FFN), the 8B's down
# projection staged in passes of 8960 columns instead of 7936 (still two), the 3B's in one pass instead of two.
# Predicted: 1B and 8B within 0.3%; 3B q4_k_m +0.5-1% (a pass's restaging and barrier less a layer). Then HF parity
# and the 1B q4_k_m's decode logits against its prefill path's over 600 positions, at 14ef9b0.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsold && tar -C /tmp/bsold -xJf .dev/carry2/bundle-old.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsold/bundle/
OLD=/tmp/bsold/bundle/run
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o5
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
row() { local tag=$1 bs=$2 m=$3; shift 3
  env "$@" timeout 90 $bs blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o5/$tag.json 2> /tmp/o5/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o5/$tag.json'));print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% of {d[\"peak_gb_s\"]:.0f} GB/s  prefill {d[\"prefill_tok_s\"]:.0f}  ttft {d[\"ttft_ms\"]:.1f} ms')" 2>&1 | tail -1; }
for s in 3.2-1b 3.2-3b 3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
  if [ $s = 3.2-1b ]; then
    toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(600)))")
    $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/prefill.npy >/dev/null
    $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/step.npy --step >/dev/null
    python3 benchmarks/logits_diff.py /tmp/prefill.npy /tmp/step.npy --label "1B q4_k_m at 14ef9b0"
  fi
  $BS blueshift bench --model /tmp/mq --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null  # clocks up
  for i in 1 2; do row $s-old-$i $OLD /tmp/mq BLUESHIFT_PERSISTENT_MERGE=2; row $s-new-$i $BS /tmp/mq; done
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/f5.tar.xz o5
done
