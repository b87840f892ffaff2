#!/usr/bin/env bash
# L6: do the loads scale with the warps an SM? The matvecs' loads alone (SKIP 64, wrong logits) and the whole kernel on
# the 8B q4_k_m at 256, 384 and 512 invocations a workgroup (8, 12, 16 warps an SM; one workgroup an SM).
# Predicted: if a subgroup's latency bounds the loads, their time goes as 1 / warps (512 -> 256: x2); if an SM-side or
# memory-side limit does, it stays flat. Last, 256 wide on a grid of 264 (two workgroups an SM: 16 warps again, in
# workgroups of half the size, each staging the whole vector).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/w8
for wg in 512 384 256 256x264; do
  for s in 64 0 31; do
    BLUESHIFT_PERSISTENT_GRID=$([ $wg = 256x264 ] && echo 264 || echo 0) BLUESHIFT_PERSISTENT_WG=${wg%x*} BLUESHIFT_PERSISTENT_SKIP=$s $BS blueshift bench --model /tmp/w8/m --prompt-tokens 16 \
      --gen-tokens 64 --reps 3 --json > /tmp/o/w8-wg$wg-s$s.json
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sys.argv[2], next(v for k,v in d['gpu_ms_by_dispatch'].items() if k.startswith('decode_persistent')))" \
      /tmp/o/w8-wg$wg-s$s.json "8B wg $wg skip $s"
  done
done
tar -C /tmp -cJf $OUT/l6.tar.xz o
