#!/usr/bin/env bash
# Session 19, call 2. L2 prefetch of the next phase's weights on the per-phase decode path (BLUESHIFT_PREFETCH_KB:
# a stream_read of the first KB of the next phase's weights after each phase, with no barrier before it). Decode logits
# (--step) bit for bit with and without; decode tok/s alternating over sizes, two rounds (predicted: 1B f16 +5-11%,
# 8B f16 +3-7% at the best size, if the phases' tails and ramps are what the F16 decode loses). Then the F16 matvecs
# at 1 row a workgroup (BLUESHIFT_GATED_ROWS=1, BLUESHIFT_MATVEC_ROWS=1) on the 8B, one round.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
row() { local tag=$1 m=$2 pt=$3; shift 3; env "$@" timeout 90 $BS blueshift bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));g=d['gpu_ms_by_dispatch'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% dispatches {d[\"dispatches_per_token\"]} barriers {d[\"barriers_per_token\"]}')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models1
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(100)))")
$BS blueshift logits --model /tmp/m1f --tokens $P --step --out /tmp/l0.npy >/dev/null 2>&1 || echo "logits FAILED"
BLUESHIFT_PREFETCH_KB=8192 $BS blueshift logits --model /tmp/m1f --tokens $P --step --out /tmp/l1.npy >/dev/null 2>&1 || echo "logits 1 FAILED"
cmp -s /tmp/l1.npy /tmp/l0.npy && echo "m1f decode logits (--step, 100 rows), prefetch 8 MB against none: identical" || echo "m1f decode logits DIFFER"
for i in 1 2; do for kb in 0 1024 4096 8192 16384; do row m1f-kb$kb-$i /tmp/m1f 512 BLUESHIFT_PREFETCH_KB=$kb; done; done
for wg in 33 66 264; do row m1f-kb8192-wg$wg /tmp/m1f 512 BLUESHIFT_PREFETCH_KB=8192 BLUESHIFT_PREFETCH_WG=$wg; done
stamp decode1
tar -C /tmp -cJf $OUT/d2.tar.xz o
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models8
for i in 1 2; do for kb in 0 4096 16384 32768; do row m8f-kb$kb-$i /tmp/m8f 512 BLUESHIFT_PREFETCH_KB=$kb; done; done
row m8f-gr1 /tmp/m8f 512 BLUESHIFT_GATED_ROWS=1
row m8f-mr1 /tmp/m8f 512 BLUESHIFT_MATVEC_ROWS=1
stamp decode8
tar -C /tmp -cJf $OUT/d2.tar.xz o
