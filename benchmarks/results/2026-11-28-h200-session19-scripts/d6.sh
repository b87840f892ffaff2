#!/usr/bin/env bash
# Session 19, call 6 (the last ~260 s of device time). The matvec butterfly on the 8B f16 at the final tree:
# BLUESHIFT_MATVEC_TREDUCE=0 against the default, alternating, two rounds, reps 3 (predicted: +0.4-1.3% without it,
# as in session 18's C6 and this session's D1).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o6
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 40 $BS blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 3 --json > /tmp/o6/$tag.json 2> /tmp/o6/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o6/$tag.json'));print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}%')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models8
for i in 1 2; do row m8f-tr-$i /tmp/m8f; row m8f-notr-$i /tmp/m8f BLUESHIFT_MATVEC_TREDUCE=0; tar -C /tmp -cJf $OUT/d6.tar.xz o6; done
stamp done
