#!/usr/bin/env bash
# Session 4, device run 6: the decode matrix with this session's code, then (time allowing) decode vs
# scalar-prefill logits over 600 positions on the 1B.
set -uo pipefail
. benchmarks/lease_setup.sh
start=$(date +%s)
nproc > /tmp/mx-nproc.txt
timeout 520 benchmarks/run_matrix.sh "$BS" /tmp/mx 2>&1 | tail -20 | tee $OUT/matrix_log.txt
cp /tmp/mx-nproc.txt /tmp/mx/nproc.txt 2>/dev/null
tar -C /tmp -cJf $OUT/matrix.tar.xz mx
cp /tmp/mx/matrix.md $OUT/ 2>/dev/null; cp /tmp/mx/matrix.png $OUT/ 2>/dev/null
echo "matrix took $(( $(date +%s) - start )) s"
if [ $(( $(date +%s) - start )) -lt 500 ]; then
  w=/tmp/dvs; mkdir -p $w
  $BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json $w/hf --seed 1 >/dev/null
  $BS blueshift convert $w/hf $w/m --quant q4_k_m >/dev/null; rm -rf $w/hf
  toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(600)))")
  BLUESHIFT_NO_COOPMAT=1 timeout 40 $BS blueshift logits --model $w/m --tokens "$toks" --out $w/p.npy >/dev/null
  timeout 40 $BS blueshift logits --model $w/m --tokens "$toks" --out $w/s.npy --step >/dev/null
  python3 -c "
import numpy as np; a=np.load('$w/p.npy'); b=np.load('$w/s.npy')
r=np.linalg.norm(a-b,axis=1)/np.linalg.norm(a,axis=1)
print(f'{a.shape[0]} positions, decode kernels vs scalar prefill: worst rel L2 {r.max():.2e}, median {np.median(r):.2e}, top-1 {100*(a.argmax(1)==b.argmax(1)).mean():.1f}%')" | tee $OUT/decode_vs_scalar.txt
fi
