#!/usr/bin/env bash
# R5 (session 33): the Q6_K head on int8 in the model (tree fa06961): rms_norm_q8x (the output norm
# straight into quantize_x_q8's form) then matvec_q6k_wide_i8, against BLUESHIFT_HEAD_I8=0 (rms_norm_f32 then
# matvec_q6k_wide, the float form) in the same bundle. 512 + 128, medians of 5, twice each; head and norm ms from the
# profiled step; logits (fold off, decode path) of each against the float head.
# Predicted (R4 isolated: -14 us on the 1B's head, -26 us on the 8B's): 1B head 0.091 -> ~0.077 ms, decode
# ~1,248 -> ~1,262 tok/s (+1.1%); 8B head 0.167 -> ~0.141 ms, ~347 -> ~350 (+0.9%); the norm dispatch as before
# (~0.010 ms). Logits within ~1e-4 of the float head (x to ~2^-16 of each 16 values' largest), top-1 100%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r5
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r5/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r5 $cfg-f32head$i $BS /tmp/m/m 512 128 5 BLUESHIFT_HEAD_I8=0
    ab_bench /tmp/r5 $cfg-i8head$i $BS /tmp/m/m 512 128 5
  done
  python3 - /tmp/r5 $cfg <<'PY'
import json, sys
for v in ("f32head1", "f32head2", "i8head1", "i8head2"):
    d = json.load(open(f"{sys.argv[1]}/{sys.argv[2]}-{v}.json"))["gpu_ms_by_dispatch"]
    print(f"  {v}: " + ", ".join(f"{k} {t:.4f}" for k, t in d.items() if not k.startswith("decode_persistent")))
PY
  stamp $cfg
  tar -C /tmp -cJf $OUT/r5.tar.xz r5
done
for cfg in llama-3.2-1b llama-3.1-8b; do
  benchmarks/logits_ab.sh $BS $cfg q4_k_m f32:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_HEAD_I8=0 \
    i8:BLUESHIFT_PERSISTENT_FOLD_O=0 | grep -v wrote
done
stamp logits
