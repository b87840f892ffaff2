#!/usr/bin/env bash
# Session 22, G5: decode_persistent_h16's f16 slots in the float staging's memory, so the down projection's Q4_K
# passes stage into slots alone (2.5 bytes a column, not 6.75): the 8B's 14336 columns in one pass instead of three,
# the 3B's and 1B's 8192 in one instead of two (the float kernel had 2, 1 and 1). Against the tree of G4's table
# (59a7851, .dev/carry2/bundle-old.tar.xz), in one command, two rounds, with PARTS 1 beside (G4: 1B +1.4%, 8B +0.5%).
# Predicted from F6 (the 3B's two passes -> one: +2.7%): 8B +2-4%, 3B +2-3%, 1B +1.5-3%.
# Then the new kernel's logits against the float form's on the 1B (grid 132: lavapipe tests run a grid of 1), and
# the final table: run_peer.sh on the 1B and 8B, q4_k_m and f16. Carry .gl, .dev/carry, .dev/carry2, .dev/peer.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsold && tar -C /tmp/bsold -xJf .dev/carry2/bundle-old.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/bsold/bundle/
OLD=/tmp/bsold/bundle/run
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/peer-out
row() { local tag=$1 bs=$2 m=$3; shift 3
  env "$@" timeout 90 $bs blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d['gpu_ms_by_kernel'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% of {d[\"peak_gb_s\"]:.0f} GB/s  kernel ' + ' '.join(f'{n} {v:.3f}' for n, v in k.items() if n.startswith('decode_persistent')))" 2>&1 | tail -1; }
for s in 3.2-1b 3.2-3b 3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
  $BS blueshift bench --model /tmp/mq --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null  # clocks up
  if [ $s = 3.2-1b ]; then
    toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(200)))")
    for d in half float; do
      BLUESHIFT_Q4K_DOT=$d $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/$d.npy --step >/dev/null
    done
    BLUESHIFT_Q4K_DOT=half $OLD blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/old.npy --step >/dev/null
    python3 benchmarks/logits_diff.py /tmp/float.npy /tmp/half.npy --label "new half vs float decode"
    python3 benchmarks/logits_diff.py /tmp/old.npy /tmp/half.npy --label "new half vs 59a7851 half"
  fi
  for i in 1 2; do row $s-old-$i $OLD /tmp/mq; row $s-new-$i $BS /tmp/mq; row $s-newp1-$i $BS /tmp/mq BLUESHIFT_PERSISTENT_PARTS=1; done
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/g5.tar.xz o
done
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout $(( 595 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/g5.tar.xz o
done
cat /tmp/peer-out/peer.md
