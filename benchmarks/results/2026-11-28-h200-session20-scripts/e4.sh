#!/usr/bin/env bash
# Session 20, call 4: E3's attention_split change (loads issued before use) in one lease against the kernel before it
# (a second bundle, built at 3ae6562, carried as .dev/carry2/bundle-old.tar.xz), alternating, two rounds; and the new
# kernel with chunks of 64 positions (BLUESHIFT_ATTN_CHUNK=64: 10 splits at 640 positions instead of 5, one score pass
# a workgroup). E3 across leases: 1B f16 866.6 -> 859.4, 8B f16 189.7 -> 192.0, the profiled attention 0.227 -> 0.237
# and 0.554 -> 0.520 ms. Predicted: within +-1% either way (the chains were not what bound it); chunk 64 -5..+5%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/bsold && tar -C /tmp/bsold -xJf .dev/carry2/bundle-old.tar.xz
OLD=/tmp/bsold/bundle/run
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o4
row() { local tag=$1 bs=$2 m=$3; shift 3; env "$@" timeout 60 $bs blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 3 --json > /tmp/o4/$tag.json 2> /tmp/o4/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o4/$tag.json'));g=d['gpu_ms_by_dispatch'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}%  attention {g.get(\"attention\",0):.3f} ms a step')" 2>&1 | tail -1; }
for s in 3.2-1b 3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mf --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
  for i in 1 2; do
    row f$s-old-$i $OLD /tmp/mf
    row f$s-new-$i $BS /tmp/mf
    row f$s-new-c64-$i $BS /tmp/mf BLUESHIFT_ATTN_CHUNK=64
  done
  rm -rf /tmp/mf
  stamp $s
  tar -C /tmp -cJf $OUT/e4.tar.xz o4
done
