#!/usr/bin/env bash
# Session 18, call 5: the persistent kernel's shape switches again, now that a task's sums take one butterfly
# (pair_sum): workgroup 384 (default up to hidden size 2048) against 512 on the 1B, PARTS 1 against 2 on both, two
# rounds, 16-token prompt. Predicted: within +-1% (the butterfly took ~2% of the step; nothing else moved).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens 16 --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d.get('gpu_ms_by_dispatch',{});print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s pk {k.get(\"decode_persistent\",0):.4f}')" 2>&1 | tail -1; }
for cfg in llama-3.2-1b llama-3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/$cfg.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/$cfg --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
done
stamp models
for i in 1 2; do
  row 1q-def-$i /tmp/llama-3.2-1b; row 1q-wg512-$i /tmp/llama-3.2-1b BLUESHIFT_PERSISTENT_WG=512; row 1q-parts1-$i /tmp/llama-3.2-1b BLUESHIFT_PERSISTENT_PARTS=1
  row 8q-def-$i /tmp/llama-3.1-8b; row 8q-parts1-$i /tmp/llama-3.1-8b BLUESHIFT_PERSISTENT_PARTS=1
done
stamp done
tar -C /tmp -cJf $OUT/c5.tar.xz o
