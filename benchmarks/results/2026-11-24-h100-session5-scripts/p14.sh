#!/usr/bin/env bash
# P14: the head matvec at 32 invocations x 2 rows (new default) vs the layers' shape (BLUESHIFT_HEAD_ROWS=4
# BLUESHIFT_HEAD_WG=0): matvec tests, logits, decode A/B.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
$BS test_kernels --gtest_filter='Matvec*' 2>&1 | grep -E "PASSED|FAILED" | head -3
mk() { local cfg=$1 q=$2; local d=/tmp/m/$(basename $cfg .json).$q
  [ -d $d ] && return; mkdir -p /tmp/m
  $BS blueshift synth --config $cfg /tmp/m/hf --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/m/hf $d --quant $q >/dev/null 2>&1; rm -rf /tmp/m/hf; }
t0=$(date +%s); mk benchmarks/configs/llama-3.2-1b.json q4_k_m; mk benchmarks/configs/llama-3.1-8b.json q4_k_m; echo "made in $(( $(date +%s) - t0 )) s"
T=$(python3 -c "import random; random.seed(3); print(','.join(str(random.randrange(128000)) for _ in range(100)))")
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do
  $BS blueshift logits --model $d --tokens $T --out /tmp/a.npy --step >/dev/null 2>&1
  BLUESHIFT_HEAD_ROWS=4 BLUESHIFT_HEAD_WG=0 $BS blueshift logits --model $d --tokens $T --out /tmp/b.npy --step >/dev/null 2>&1
  python3 -c "
import numpy as np; a=np.load('/tmp/a.npy'); b=np.load('/tmp/b.npy'); r=np.linalg.norm(a-b,axis=1)/np.linalg.norm(b,axis=1)
print('$(basename $d) decode logits new vs base: worst %.2e, top-1 %d/%d' % (r.max(), (a.argmax(1)==b.argmax(1)).sum(), len(a)))"
done
echo "== decode A/B (512 + 128, 5 reps)"
for d in /tmp/m/llama-3.2-1b.q4_k_m /tmp/m/llama-3.1-8b.q4_k_m; do
  for r in 1 2; do for v in base new; do E=""; [ $v = base ] && E="BLUESHIFT_HEAD_ROWS=4 BLUESHIFT_HEAD_WG=0"
    env $E timeout 120 $BS blueshift bench --model $d --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $OUT/$(basename $d).$v.$r.json 2>/dev/null
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); h=[v for k,v in d['gpu_ms_by_dispatch'].items() if '128256' in k]; print(f\"{sys.argv[2]:32s} decode {d['decode_tok_s']:7.1f} tok/s  p50 {d['decode_ms_per_token_p50']:.3f} ms  head {h[0] if h else 0:.3f} ms  pct {d['pct_of_peak']:.1f}\")" $OUT/$(basename $d).$v.$r.json "$(basename $d) $v"
  done; done
done
