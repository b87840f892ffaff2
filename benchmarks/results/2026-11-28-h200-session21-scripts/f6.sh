#!/usr/bin/env bash
# Session 21, F6: F5 again with the down projection's staging passes of equal size (the 8B's 14336 columns in
# 7168 + 7168; the 3B and 1B in one pass as at 14ef9b0), against the tree F4's table ran (a774297 with
# BLUESHIFT_PERSISTENT_MERGE=2). Predicted: 8B at or above the old tree (F5 had 8960 + 5376 1.7% below 7936 + 6400);
# 3B +2.7% as in F5; 1B +0.3%. Then the 8B's decode logits against its prefill path's over 100 positions (the
# passes), at this tree.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsold && tar -C /tmp/bsold -xJf .dev/carry2/bundle-old.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsold/bundle/
OLD=/tmp/bsold/bundle/run
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o6
row() { local tag=$1 bs=$2 m=$3; shift 3
  env "$@" timeout 90 $bs blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o6/$tag.json 2> /tmp/o6/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o6/$tag.json'));print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% of {d[\"peak_gb_s\"]:.0f} GB/s  prefill {d[\"prefill_tok_s\"]:.0f}  ttft {d[\"ttft_ms\"]:.1f} ms')" 2>&1 | tail -1; }
for s in 3.1-8b 3.2-3b 3.2-1b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
  $BS blueshift bench --model /tmp/mq --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null  # clocks up
  for i in 1 2; do row $s-old-$i $OLD /tmp/mq BLUESHIFT_PERSISTENT_MERGE=2; row $s-new-$i $BS /tmp/mq; done
  if [ $s = 3.1-8b ]; then
    toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(100)))")
    $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/prefill.npy >/dev/null
    $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/step.npy --step >/dev/null
    python3 benchmarks/logits_diff.py /tmp/prefill.npy /tmp/step.npy --label "8B q4_k_m"
  fi
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/f6.tar.xz o6
done
