#!/usr/bin/env bash
# Session 17 R2. (a) On the H200, is the persistent decode kernel still the faster path? Each row's decode with the
# default path against the other (BLUESHIFT_NO_PERSISTENT=1 where the default is persistent, BLUESHIFT_PERSISTENT=1 for
# the 1B f16), alternating, 512 + 128, medians of 3. Predicted: the per-phase path's matvecs scale with bandwidth
# (standalone F16 4.4-4.7 TB/s on the H200) while the persistent phases do not (~2.7 TB/s for F16): 8B f16 per-phase
# ahead by 10-25%; q4_k_m rows: persistent stays ahead (its Q4_K phases ~1.4 TB/s vs standalone 2.1 plus dispatch
# costs) or even.
# (b) s12 fixed: the 46 KB pad had taken 49408 bytes of shared memory at wg 512 (over the 48 KiB limit: the sweep hung
# for 300 s); pad45k is 11520 floats (at most 48384 bytes). Still 4 workgroups an SM.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
B="bench --prompt-tokens 512 --gen-tokens 128 --reps 3 --json"
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 90 $BS blueshift $B --model /tmp/$m > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json,sys;d=json.load(open('/tmp/o/$tag.json'));k=d.get('gpu_ms_by_kernel',{});print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s, ttft {d[\"ttft_ms\"]:.2f} ms, pct {d[\"pct_of_peak\"]:.1f}', {a:round(b,3) for a,b in k.items()})" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
for i in 1 2; do
  row m1q-pk-$i m1q; row m1q-nopk-$i m1q BLUESHIFT_NO_PERSISTENT=1
  row m1f-def-$i m1f; row m1f-pk-$i m1f BLUESHIFT_PERSISTENT=1
done
stamp "1B rows"
echo "== s12 (fixed)"
BLUESHIFT_PIPELINE_STATS=1 timeout 100 $BS bs_gemv_bench --dtype q4k --shape 14336x4096 4096x14336 \
  --wg 64 128 256 --rows 1 2 4 --reps 30 --rounds 2 --mv-spv .dev/s17/spv --json > /tmp/o/gemv.json 2> /tmp/o/gemv.err
echo "rc $?"
grep "pipeline-stats" /tmp/o/gemv.err | grep -E "q4k\.(nopad|pad)" | sort -u | head -12
python3 - <<'PY'
import json
for r in json.load(open('/tmp/o/gemv.json'))['results'] if isinstance(json.load(open('/tmp/o/gemv.json')), dict) else json.load(open('/tmp/o/gemv.json')):
    print(f"== q4k {r['m']}x{r['k']}: GB/s isolated / stream by wg x rows")
    by = {}
    for c in r['configs']:
        by.setdefault(c['kernel'], {})[(c['wg'], c['rows'])] = (c['gb_s'], c['stream_gb_s'])
    for k in sorted(by):
        cells = '  '.join(f"{wg}x{rows}:{v[0]:4.0f}/{v[1]:4.0f}" for (wg, rows), v in sorted(by[k].items()))
        print(f"  {k:10s} {cells}")
PY
stamp "s12"
tar -C /tmp -cJf $OUT/r2.tar.xz o
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B models"
for i in 1 2; do
  row m8q-pk-$i m8q; row m8q-nopk-$i m8q BLUESHIFT_NO_PERSISTENT=1
  row m8f-pk-$i m8f; row m8f-nopk-$i m8f BLUESHIFT_NO_PERSISTENT=1
  stamp "8B round $i"
done
tar -C /tmp -cJf $OUT/r2.tar.xz o
stamp done
