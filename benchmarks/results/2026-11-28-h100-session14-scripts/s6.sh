#!/usr/bin/env bash
# Session 14, run S6: S5's touches with subgroup 0 of each workgroup left out (its fence at the grid barrier waited
# for its lanes' touches): greedy ids, decode A/B on the 1B q4_k_m (BLUESHIFT_PERSISTENT_TOUCH=0: without).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
# test_model's Persistent cases on the real grid, if .dev/s14/tests.tar.xz holds a test_model of the patched tree:
# they run `blueshift` through BS_BINARY (its compile-time default is the build tree, absent here: S5's 12 failures).
if [ -f .dev/s14/tests.tar.xz ]; then
  mkdir -p /tmp/t && tar -C /tmp/t -xJf .dev/s14/tests.tar.xz
  BS_BINARY=/tmp/bs/bundle/bin/blueshift LD_LIBRARY_PATH=/tmp/bs/bundle/lib timeout 150 /tmp/t/test_model \
    --gtest_filter='*Persistent*' 2>&1 | grep -E "OK|FAILED|PASSED" | tail -14
fi
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
dec() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 60 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/dec-$m-$lab.json 2>/dev/null
  python3 -c "import json; d=json.load(open('/tmp/o/dec-$m-$lab.json')); print('$m $lab: decode', round(d['decode_tok_s'],1), 'tok/s,', round(d['pct_of_peak'],1), '% of peak; kernel', round(d['gpu_ms_by_dispatch']['decode_persistent'],4), 'ms')"
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
for r in t1 t0; do e=""; [ $r = t0 ] && e="BLUESHIFT_PERSISTENT_TOUCH=0"
  env $e $BS blueshift generate --model /tmp/m1q --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 64 > /tmp/i-$r.txt 2>/dev/null; done
cmp -s /tmp/i-t1.txt /tmp/i-t0.txt && echo "m1q greedy ids (64 after 300): touch == no touch" || echo "m1q greedy ids DIFFER"
for i in 1 2; do dec m1q t1-$i; dec m1q t0-$i BLUESHIFT_PERSISTENT_TOUCH=0; done
tar -C /tmp -cJf $OUT/s6.tar.xz o
stamp "all done"
