#!/usr/bin/env bash
# Session 19, call 5 (on the machine still warm from D4). The 8B f16's read-ahead at 8 / 12 MiB and 264 / 396
# workgroups against the default (4 MiB, the SM count): D4 found 8 MiB at 264 +0.8% in both rounds. Predicted: 8 MiB at
# 264 +0.5-1% again; 12 MiB even or lower (D2: 16 MiB at 132 lost 8%).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o5
row() { local tag=$1 m=$2 pt=$3; shift 3; env "$@" timeout 90 $BS blueshift bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o5/$tag.json 2> /tmp/o5/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o5/$tag.json'));print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}%')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models8
for i in 1 2; do
  row m8f-def-$i /tmp/m8f 512
  row m8f-kb8192-wg264-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_WG=264 BLUESHIFT_PREFETCH_KB=8192
  row m8f-kb8192-wg396-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_WG=396 BLUESHIFT_PREFETCH_KB=8192
  row m8f-kb12288-wg264-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_WG=264 BLUESHIFT_PREFETCH_KB=12288
done
stamp sweep
tar -C /tmp -cJf $OUT/d5.tar.xz o5
