#!/usr/bin/env bash
# Prepared in session 22 for the next session (not run: no device time left). ~7 minutes on the lease.
# next-h1.patch (applies to 62fa8af and later; passes test_persistent 16/16 on lavapipe) = G6's layout (the f16
# slots at offsets fixed by specialization; the down projection's Q4_K passes stage from scratch into slots alone:
# the 1B's and 3B's 8192 columns in one pass, the 8B's 14336 in two) with stage_slots' loads coalesced: four
# invocations a slot, one vec4 each (a vec4 view of the scratch binding, which spirv_reflect now merges), the slot's
# largest value and sum by two shuffles. G5-G6's stage_slots read each slot's 16 floats from one invocation and
# lost 2-3% on the 1B and 3B.
# Before the lease, on the development machine:
#   1. bundle this tree unpatched as the old side:
#        rm -rf /tmp/bundle && scripts/bundle.sh build /tmp/bundle && strip /tmp/bundle/bin/*
#        tar -C /tmp -cJf .dev/carry2/bundle-old.tar.xz bundle/bin/blueshift bundle/run
#   2. git apply benchmarks/results/2026-11-28-h200-session22-scripts/next-h1.patch, build, run test_persistent on
#      lavapipe, and bundle the patched tree as .dev/carry/bundle.tar.xz (the README's bundle line).
# Carry .gl, .dev/carry, .dev/carry2 (under 64 MiB with .dev/peer left out).
# Predicted, if the staging's loads were G6's whole loss: 1B +1.5-3%, 3B +2-3% (F6: one pass fewer on the 3B,
# +2.7%), 8B +1-2% (three passes -> two); then keep the patch. If the 1B and 3B still lose, the cost is the single
# pass itself or the larger SH, and the patch goes.
# PARTS 1 rides along: G4 (one round) had the f16 form's PARTS 1 at 1B +1.4%, 8B +0.5%. Then persistent_phases.sh
# on the 8B with the unpatched f16 kernel (its PROBE bit 2 does nothing there: the float form's).
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
  if [ $s = 3.2-1b ]; then  # the patched kernel's logits against the old one's (grid 132; lavapipe runs a grid of 1)
    toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(200)))")
    $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/new.npy --step >/dev/null
    $OLD blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/old.npy --step >/dev/null
    BLUESHIFT_Q4K_DOT=float $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/float.npy --step >/dev/null
    python3 benchmarks/logits_diff.py /tmp/old.npy /tmp/new.npy --label "patched vs old (f16 both)"
    python3 benchmarks/logits_diff.py /tmp/float.npy /tmp/new.npy --label "patched vs float form"
  fi
  for i in 1 2; do
    row $s-old-$i $OLD /tmp/mq; row $s-new-$i $BS /tmp/mq
    row $s-oldp1-$i $OLD /tmp/mq BLUESHIFT_PERSISTENT_PARTS=1; row $s-newp1-$i $BS /tmp/mq BLUESHIFT_PERSISTENT_PARTS=1
  done
  # The f16 kernel's breakdown (the unpatched default; G2 has the float kernel's: loads alone 2.20 of 3.33 ms).
  if [ $s = 3.1-8b ]; then timeout 150 benchmarks/persistent_phases.sh $OLD /tmp/mq 32; fi
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/h1.tar.xz o
done
