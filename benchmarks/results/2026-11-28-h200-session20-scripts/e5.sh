#!/usr/bin/env bash
# Session 20, call 5. Where decode attention's ~14 us a layer (1B f16) goes: attention_split's PROBE bits
# (timing breakdowns only, wrong logits): 8 = return at once (the dispatch's own cost), 4 = no key loads, 2 = no V
# loads, 1 = no merge, 6 = neither loads. Predicted: most of it is the dispatch itself and the merge's chain (bit 8
# leaves ~5 us, bit 1 saves ~3 us); the loads ~2-3 us.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o5
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 3 --json > /tmp/o5/$tag.json 2> /tmp/o5/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o5/$tag.json'));g=d['gpu_ms_by_dispatch'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  attention {g.get(\"attention\",0):.3f} ms a step')" 2>&1 | tail -1; }
for s in 3.2-1b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mf --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
  for pr in 0 8 4 2 1 6 7; do row f$s-probe$pr /tmp/mf BLUESHIFT_ATTN_PROBE=$pr; done
  rm -rf /tmp/mf
  stamp $s
done
tar -C /tmp -cJf $OUT/e5.tar.xz o5
