#!/usr/bin/env bash
# Session 19, call 3. The L2 prefetch by phase (BLUESHIFT_PREFETCH_PHASES: 1 o, 2 gate + up, 4 down, 8 the next q/k/v)
# and size. D2 found the 8B f16 +2.4% at 4 MB a phase (all four) and the 1B f16 -1% at 1 MB, worse above. Predicted:
# the gain sits in the phases after the long ones (2: after o?, 4: after gate + up, 8: after down), 8B ~+3% with the
# best mask; the 1B even or slightly up with 2 and 4 only.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
row() { local tag=$1 m=$2 pt=$3; shift 3; env "$@" timeout 90 $BS blueshift bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% dispatches {d[\"dispatches_per_token\"]}')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models8
for i in 1 2; do
  row m8f-off-$i /tmp/m8f 512
  for kb in 2048 4096 6144; do row m8f-kb$kb-m15-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_KB=$kb; done
  for m in 1 2 4 8 6 14; do row m8f-kb4096-m$m-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_KB=4096 BLUESHIFT_PREFETCH_PHASES=$m; done
  tar -C /tmp -cJf $OUT/d3.tar.xz o
done
stamp decode8
rm -rf /tmp/m8f
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
for i in 1 2; do
  row m1f-off-$i /tmp/m1f 512
  row m1f-kb512-m15-$i /tmp/m1f 512 BLUESHIFT_PREFETCH_KB=512
  for m in 2 4 6 8; do row m1f-kb1024-m$m-$i /tmp/m1f 512 BLUESHIFT_PREFETCH_KB=1024 BLUESHIFT_PREFETCH_PHASES=$m; done
  row m1f-kb2048-m4-$i /tmp/m1f 512 BLUESHIFT_PREFETCH_KB=2048 BLUESHIFT_PREFETCH_PHASES=4
done
stamp decode1
tar -C /tmp -cJf $OUT/d3.tar.xz o
