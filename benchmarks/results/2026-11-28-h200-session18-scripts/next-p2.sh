#!/usr/bin/env bash
# Prepared in session 17 for the next session (not run). The per-phase F16 decode's remaining shapes on the H200, now
# that F16 layers always take that path: plain matvec rows 2 (session 17's R4, one round: 1B f16 +1.5%, 8B f16 -0.5%)
# and workgroup sizes (BLUESHIFT_MATVEC_WG; the default is 256 for these rows: k / 8 parts, at most 256), alternating,
# two rounds. ~3 minutes. Predicted: within +-2% each; adopt only what wins on both models in both rounds.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
B="bench --prompt-tokens 512 --gen-tokens 128 --reps 3 --json"
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 40 $BS blueshift $B --model $m > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d.get('gpu_ms_by_kernel',{});print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s', {a:round(b,3) for a,b in k.items()})" 2>&1 | tail -1; }
for cfg in llama-3.2-1b llama-3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/$cfg.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/$cfg --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
done
stamp models
for i in 1 2; do
  for cfg in "def" "mr2 BLUESHIFT_MATVEC_ROWS=2" "wg128 BLUESHIFT_MATVEC_WG=128" "wg512 BLUESHIFT_MATVEC_WG=512"; do
    set -- $cfg; tag=$1; shift
    row 1b-$tag-$i /tmp/llama-3.2-1b "$@"; row 8b-$tag-$i /tmp/llama-3.1-8b "$@"
  done
  stamp "round $i"
done
tar -C /tmp -cJf $OUT/p2.tar.xz o
