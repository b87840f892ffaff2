#!/usr/bin/env bash
# H5: stage_copy on vec4s (the down projection's staging: 1B one round of loads instead of three, 8B one a pass
# instead of two) against the tree before it (4b83d69, .dev/carry2), and the grid barrier on acquire / release
# atomics (ACQREL=1) against fences, on the 1B, 8B and 3B q4_k_m, two rounds; logits against the old tree and
# ACQREL 1 against 0 (the same arithmetic: expect 0); the 1B's grid barriers alone (SKIP=63) with ACQREL 0 and 1.
# Predicted: vec4 staging 1B +2-3%, 8B +1-1.5%; ACQREL, if the fences are ~0.5 us of the barrier's 1.9 us
# (H4: 80 barriers 0.154 ms on the 1B), 1B +3-4%, 8B +2%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsold && tar -C /tmp/bsold -xJf .dev/carry2/bundle-old.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsold/bundle/
OLD=/tmp/bsold/bundle/run
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
row() { local tag=$1 bs=$2 m=$3; shift 3
  env "$@" timeout 60 $bs blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /dev/null
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d['gpu_ms_by_kernel'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% of {d[\"peak_gb_s\"]:.0f} GB/s  kernel ' + ' '.join(f'{n} {v:.3f}' for n, v in k.items() if n.startswith('decode_persistent')))" 2>&1 | tail -1; }
for s in 3.2-1b 3.1-8b 3.2-3b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
  $BS blueshift bench --model /tmp/mq --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null  # clocks up
  if [ $s = 3.2-1b ]; then
    toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(200)))")
    $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/new.npy --step >/dev/null
    BLUESHIFT_PERSISTENT_ACQREL=1 $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/acq.npy --step >/dev/null
    $OLD blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/old.npy --step >/dev/null
    python3 benchmarks/logits_diff.py /tmp/old.npy /tmp/new.npy --label "vec4 staging vs old"
    python3 benchmarks/logits_diff.py /tmp/new.npy /tmp/acq.npy --label "ACQREL 1 vs 0"
    for a in 0 1; do
      BLUESHIFT_PERSISTENT_SKIP=63 BLUESHIFT_PERSISTENT_ACQREL=$a $BS blueshift bench --model /tmp/mq --prompt-tokens 16 --gen-tokens 64 --reps 3 --json > /tmp/o/barriers-acqrel$a.json
      python3 -c "import json;d=json.load(open('/tmp/o/barriers-acqrel$a.json'));print('barriers alone, ACQREL=$a:', {n: round(v, 4) for n, v in d['gpu_ms_by_dispatch'].items() if n.startswith('decode_persistent')})"
    done
  fi
  for i in 1 2; do
    row $s-old-$i $OLD /tmp/mq
    row $s-new-$i $BS /tmp/mq
    row $s-acqrel-$i $BS /tmp/mq BLUESHIFT_PERSISTENT_ACQREL=1
  done
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/h5.tar.xz o
done
