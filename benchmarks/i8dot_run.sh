#!/usr/bin/env bash
# Issue 15, branch i8dot: Q4_K decode on integer dot products (kernels_glsl/int_dot.glsl) on the H100.
# Run from the repository root on the lease machine with .gl carried and this branch's bundle (scripts/bundle.sh
# of this tree, with test_kernels and test_model stripped into bundle/bin) as .dev/i8/bundle.tar.xz, or else
# the one lease_setup.sh unpacks from .dev/carry:
#   bash benchmarks/i8dot_run.sh          # everything, ~4-5 min: device, tests, gemv A/B, 1B + 8B decode A/B, logits
#   bash benchmarks/i8dot_run.sh quick    # device, tests and gemv A/B only (~1.5 min)
#   bash benchmarks/i8dot_run.sh perphase # the per-phase decode (BLUESHIFT_NO_PERSISTENT=1): its plain Q4_K
#                                         # matvecs (o, down) float vs int, 1B + 8B, two pairs (~3 min)
# Bench JSON goes to $OUT (default /tmp/i8out).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
if [ -f .dev/i8/bundle.tar.xz ]; then
  rm -rf /tmp/bs/bundle && mkdir -p /tmp/bs && tar -C /tmp/bs -xJf .dev/i8/bundle.tar.xz
  BS=/tmp/bs/bundle/run
fi
OUT=${OUT:-/tmp/i8out}
mkdir -p "$OUT"
export BS_BINARY=/tmp/bs/bundle/bin/blueshift
CMP=benchmarks/results/2026-11-24-h100-session6-scripts/cmp.py
t0=$(date +%s)
el() { echo "[+$(($(date +%s) - t0)) s] $*"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader

el "== integer dot products on this device"
if command -v vulkaninfo >/dev/null 2>&1; then
  vulkaninfo 2>/dev/null | grep -E "integerDotProduct4x8BitPacked.*Accelerated|shaderIntegerDotProduct" | sort -u
else
  echo "(no vulkaninfo here; blueshift's reading of the same properties:)"
fi
$BS blueshift devices --json | python3 -c "
import json, sys
for a in json.load(sys.stdin): print(a['name'], '| int_dot', a.get('int_dot'), '| 4x8 packed signed accelerated', a.get('int_dot_accelerated'))"

el "== tests: float64 matvec (MatvecInt8 = the new kernel) and the persistent kernel incl. *_int cases"
[ "${1:-}" = perphase ] || timeout 90 $BS test_kernels --gtest_filter='MatvecInt8.*:Matvec.Q4K*' 2>&1 | grep -E '^\[  (PASSED|FAILED|SKIPPED)|Expected|actual' | head -12
timeout 150 $BS test_model --gtest_filter='Synth/Persistent.*:PerPhaseInt8.*' 2>&1 | grep -E 'rel L2|^\[  (PASSED|FAILED)|Expected' | head -20

el "== bs_gemv_bench: Q4_K float (registry) vs int8 dot (i8; i8mx = high nibbles in place, mixed signedness; i8_1level = single level, a speed bound), 8B shapes"
SHAPES=4096x4096,1024x4096,14336x4096,4096x14336,128256x2048
[ "${1:-}" = perphase ] || timeout 150 $BS bs_gemv_bench --dtype q4k --shape $SHAPES --wg 64,128,256 --rows 2,4,8 --rounds 2 --peak 3350
el "   Q8_0 on the same shapes (the issue's reference: ~2.75 TB/s back to back)"
[ "${1:-}" = perphase ] || timeout 60 $BS bs_gemv_bench --dtype q8_0 --shape $SHAPES --wg 64,128 --rows 2,4 --peak 3350
[ "${1:-}" = quick ] && { el "quick: done"; exit 0; }

# Decode A/B: bench --json, 512-token prompt, 128 generated, medians of 5; pk = the persistent kernel's
# profiled ms per step (decode_persistent = float, decode_persistent_i8 / _i8mx = int / intmx: the label names
# the variant).
mk() {
  $BS blueshift synth --config benchmarks/configs/$1.json /tmp/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/hf /tmp/$2 --quant q4_k_m >/dev/null 2>&1
  rm -rf /tmp/hf
}
bench() {
  env $3 timeout 90 $BS blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
    >"$OUT/$1-$2.json" 2>/tmp/b.err && python3 -c "
import json; d=json.load(open('$OUT/$1-$2.json')); k=d['gpu_ms_by_kernel']
pk = ', '.join('%s %.3f ms' % (n, v) for n, v in k.items() if n.startswith('decode_persistent')) or 'no persistent kernel'
print('%-3s %-7s decode %6.1f tok/s (%.3f ms/token)  %s' % ('$1', '$2', d['decode_tok_s'], 1000 / d['decode_tok_s'], pk))" ||
    echo "$1 $2 FAILED: $(tail -2 /tmp/b.err)"
}
P="BLUESHIFT_PERSISTENT=1"  # the 1B is below the persistent default's dim 4096
for m in m1:llama-3.2-1b m8:llama-3.1-8b; do
  M=${m%%:*}
  mk ${m#*:} $M
  el "== $M ready"
  $BS blueshift bench --model /tmp/$M --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null 2>&1  # warm-up
  if [ "${1:-}" = perphase ]; then
    # quantize_x (its own dispatch before each int8 matvec) shows in the profile as a kernel of its own.
    for r in float int float2 int2; do
      bench $M pp_$r "BLUESHIFT_NO_PERSISTENT=1 BLUESHIFT_Q4K_DOT=${r%2}"
      python3 -c "
import json; k=json.load(open('$OUT/$M-pp_$r.json'))['gpu_ms_by_kernel']
print('      ', ', '.join('%s %.3f' % (n, v) for n, v in sorted(k.items(), key=lambda kv: -kv[1])[:6]))"
    done
    rm -rf /tmp/$M
    continue
  fi
  bench $M float "$P BLUESHIFT_Q4K_DOT=float"
  bench $M int "$P BLUESHIFT_Q4K_DOT=int"
  bench $M float2 "$P BLUESHIFT_Q4K_DOT=float"
  bench $M int2 "$P BLUESHIFT_Q4K_DOT=int"
  bench $M intmx "$P BLUESHIFT_Q4K_DOT=intmx"  # high nibbles in place, mixed-signedness dot products
  # Q4_K parts per lane per step (default 2): the int form holds fewer x registers than the float one did at 4.
  bench $M int_p3 "$P BLUESHIFT_Q4K_DOT=int BLUESHIFT_PERSISTENT_PARTS=3"
  bench $M int_p4 "$P BLUESHIFT_Q4K_DOT=int BLUESHIFT_PERSISTENT_PARTS=4"
  N=200
  [ $M = m8 ] && N=60
  T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128256)) for _ in range($N)))")
  BLUESHIFT_NO_PERSISTENT=1 timeout 90 $BS blueshift logits --model /tmp/$M --tokens $T --out /tmp/ref.npy --step >/dev/null 2>&1
  for d in float int; do
    env $P BLUESHIFT_Q4K_DOT=$d timeout 90 $BS blueshift logits --model /tmp/$M --tokens $T --out /tmp/$d.npy --step >/dev/null 2>&1
  done
  el "   $N steps, logits --step: int vs float persistent, and each vs the per-phase path (float matvecs)"
  python3 $CMP /tmp/int.npy /tmp/float.npy
  python3 $CMP /tmp/float.npy /tmp/ref.npy
  python3 $CMP /tmp/int.npy /tmp/ref.npy
  rm -f /tmp/*.npy
  rm -rf /tmp/$M
done
el "done"
