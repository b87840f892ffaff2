#!/usr/bin/env bash
# Session 15's prepared run S6 (not run: no device time left): the loads-only breakdown (SKIP bit 6) on the 1B and 8B,
# the 8B q4_k_m and f16 loads' split (BLUESHIFT_LOAD_STATS=1), and the persistent kernel's gate/up phase with two tasks a
# subgroup (s6-persistent-dual.patch; BLUESHIFT_PERSISTENT_DUAL=1, off by default in the patch). Apply the patch,
# build, bundle into .dev/carry, carry a test_model built from the patched tree in .dev/s16/tests.tar.xz.
# Predicted: 1B q4_k_m P4 0.251 -> ~0.16 ms a step, kernel ~0.94 -> ~0.85 ms, decode ~919 -> ~1000 tok/s; the 8B
# unchanged (dim 4096 is two steps a row: DUAL is not set). Logits bit for bit (lavapipe: identical).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/t && tar -C /tmp/t -xJf .dev/s16/tests.tar.xz
LD_LIBRARY_PATH=/tmp/bs/bundle/lib BS_BINARY=/tmp/bs/bundle/bin/blueshift timeout 120 /tmp/t/test_model --gtest_filter='*Persistent*' 2>&1 | tail -3
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(64)))")
dec() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/dec-$m-$lab.json 2>/dev/null
  python3 -c "import json; d=json.load(open('/tmp/o/dec-$m-$lab.json')); print('$m $lab: decode', round(d['decode_tok_s'],1), 'tok/s, kernel', round(d['gpu_ms_by_dispatch']['decode_persistent'],4), 'ms')" || echo "$m $lab FAILED"
}
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h1
for d in 0 1; do BLUESHIFT_PERSISTENT_DUAL=$d $BS blueshift logits --model /tmp/m1q --tokens $P --step --out /tmp/l$d.npy >/dev/null 2>&1; done
cmp -s /tmp/l0.npy /tmp/l1.npy && echo "m1q decode-path logits (64 steps): DUAL == no DUAL, bit for bit" || echo "m1q logits DIFFER"
for i in 1 2; do dec m1q d0-$i; dec m1q d1-$i BLUESHIFT_PERSISTENT_DUAL=1; done
echo "== phases (the loads-only line: SKIP bit 6)"; timeout 80 bash benchmarks/persistent_phases.sh $BS /tmp/m1q
echo "== phases, DUAL"; BLUESHIFT_PERSISTENT_DUAL=1 timeout 80 bash benchmarks/persistent_phases.sh $BS /tmp/m1q
stamp "1B"
# The 8B: where decode's matvec time goes (loads alone against loads and math), and where load time goes.
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1
echo "== phases 8B q4_k_m"; timeout 120 bash benchmarks/persistent_phases.sh $BS /tmp/m8q 32
BLUESHIFT_LOAD_STATS=1 $BS blueshift bench --model /tmp/m8q --load-only 2>&1 | tail -2
rm -rf /tmp/m8q; $BS blueshift convert /tmp/h8 /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h8
BLUESHIFT_LOAD_STATS=1 $BS blueshift bench --model /tmp/m8f --load-only 2>&1 | tail -2
stamp "8B"
echo "== standalone matvecs, 8B shapes (H200)"; timeout 100 $BS bs_gemv_bench --dtype q4k q6k f16 --shape 14336x4096 4096x14336 4096x4096 --reps 50 --rounds 3 2>&1 | tail -12
stamp gemv
tar -C /tmp -cJf $OUT/s6.tar.xz o
