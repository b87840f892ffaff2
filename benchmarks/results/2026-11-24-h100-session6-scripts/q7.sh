#!/usr/bin/env bash
# Session 6, run 7 (main after merging smallcm, gated 6): serve_rowscm.sh, then the 1B F16 decode (per-phase by default
# again) against the persistent kernel forced.
set -uo pipefail
OUT=$OUT bash .dev/s6/serve_rowscm.sh 2>&1 | tail -22
. benchmarks/lease_setup.sh >/dev/null 2>&1
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/f16 --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
for r in 1 2; do for e in X=0 BLUESHIFT_PERSISTENT=1; do
  env $e timeout 60 $BS blueshift bench --model /tmp/f16 --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/f.json 2>/dev/null \
    && python3 -c "import json; d=json.load(open('/tmp/f.json')); print('1B f16 [$e] decode %.1f tok/s kernels %s' % (d['decode_tok_s'], sorted(d['gpu_ms_by_kernel'])))"
done; done
