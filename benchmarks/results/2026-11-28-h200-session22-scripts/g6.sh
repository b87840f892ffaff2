#!/usr/bin/env bash
# Session 22, G6: the f16 slots at offsets fixed by specialization (SX_SMALL, spec constant 11), against G4's tree
# (59a7851) in one command; G5's layout, set per staging at run time, lost 2.9% on the 1B and 1.8% on the 3B.
# Now the 1B's and 3B's down projections take one pass (59a7851: two), the 8B's two (59a7851: three), with the
# addressing 59a7851 had. Predicted: 1B +1-2.5%, 8B +0.5-1.5%, 3B +1-2.5% (F6: two passes -> one, +2.7% on the 3B),
# and PARTS 1 as in G5 (8B +1%). Carry .gl, .dev/carry, .dev/carry2. Under 4 minutes (the session's last 315 s).
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
  for i in 1 2; do row $s-old-$i $OLD /tmp/mq; row $s-new-$i $BS /tmp/mq; row $s-newp1-$i $BS /tmp/mq BLUESHIFT_PERSISTENT_PARTS=1; done
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/g6.tar.xz o
done
