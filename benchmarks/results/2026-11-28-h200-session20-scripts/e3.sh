#!/usr/bin/env bash
# Session 20, call 3: attention_split with each invocation's loads issued before use (f7c...: key pieces, V rows,
# the merge's partials). The per-phase decode's attention took 14.2 us a layer on the 1B f16 and 17.3 on the 8B f16
# (E1's profiles, 0.227 / 0.554 ms a step) for ~1-2.6 MB of K/V: serial chains of round trips. Predicted: ~5-7 us a
# layer; decode 1B f16 866 -> ~940 (+8%), 3B f16 348.5 -> ~360, 8B f16 189.7 -> ~198 (+4%). Checks first: HF parity,
# then the 1B f16's decode kernels against its prefill kernels over 600 positions (teacher-forced).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o3
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 3 --json > /tmp/o3/$tag.json 2> /tmp/o3/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o3/$tag.json'));g=d['gpu_ms_by_dispatch'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}%  attention {g.get(\"attention\",0):.3f} ms a step')" 2>&1 | tail -1; }
for s in 3.2-1b 3.2-3b 3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mf --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
  if [ $s = 3.2-1b ]; then
    toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(600)))")
    $BS blueshift logits --model /tmp/mf --tokens "$toks" --out /tmp/prefill.npy >/dev/null
    $BS blueshift logits --model /tmp/mf --tokens "$toks" --out /tmp/step.npy --step >/dev/null
    python3 -c "
import numpy as np
a = np.load('/tmp/prefill.npy'); b = np.load('/tmp/step.npy')
rel = np.linalg.norm(a - b, axis=1) / np.linalg.norm(a, axis=1)
print(f'{a.shape[0]} positions, decode vs prefill kernels: worst rel L2 {rel.max():.2e} (at {rel.argmax()}), median {np.median(rel):.2e}, top-1 {100 * (a.argmax(1) == b.argmax(1)).mean():.1f}%')"
  fi
  for i in 1 2; do row f$s-$i /tmp/mf; done
  rm -rf /tmp/mf
  stamp $s
  tar -C /tmp -cJf $OUT/e3.tar.xz o3
done
