#!/usr/bin/env bash
# R8 (session 31, 423c6dc): bench's new decode_kernel field on the 1B and 8B q4_k_m (the persistent kernel's variant,
# grid, workgroup, staging floats and down-projection passes on the H200), one short run each.
# Predicted: 1B decode_persistent_h16_fold, 132 x 512; 8B 132 x 640; staging and passes as the 48 KiB (or larger)
# shared-memory limit gives them.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  timeout 60 $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > $OUT/r8-$cfg.json
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], d['decode_kernel'])" $OUT/r8-$cfg.json $cfg
  stamp $cfg
done
