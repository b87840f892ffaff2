#!/usr/bin/env bash
# Session 10, run A5: three split-k workspaces taken in turn (q, k and v GEMMs side by side) against one, as bundles
# of the tree before (old.tar.xz, with BLUESHIFT_GATED_GEMM as the new default: 0 for q4_k_m, 1 for f16) and after;
# 1B q4_k_m and f16 (logits at 400 tokens, TTFT in three alternating pairs), 8B q4_k_m (two pairs).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
mkdir -p /tmp/old && tar -C /tmp/old -xJf .dev/s10/old.tar.xz
OLD=/tmp/old/bundle/run
t0=$(date +%s)
T=$(python3 -c "import random; random.seed(5); print(','.join(str(random.randrange(128000)) for _ in range(400)))")
gate() { case $1 in *f) echo 1;; *) echo 0;; esac; }
check() {
  BLUESHIFT_GATED_GEMM=$(gate $1) $OLD blueshift logits --model /tmp/$1 --tokens $T --out /tmp/a.npy >/dev/null 2>&1
  $BS blueshift logits --model /tmp/$1 --tokens $T --out /tmp/b.npy >/dev/null 2>&1
  python3 .dev/s10/cmp.py /tmp/b.npy /tmp/a.npy; cmp -s /tmp/a.npy /tmp/b.npy && echo "$1: logits bit-identical"
}
one() { env "$3" timeout 60 $2 blueshift bench --model /tmp/$1 --prompt-tokens 512 --gen-tokens 16 --reps 5 --json > /tmp/b.json 2>/dev/null \
    && python3 -c "
import json; d=json.load(open('/tmp/b.json')); print('$1 %-4s prefill %8.1f tok/s  TTFT %6.2f ms' % ('$4', d['prefill_tok_s'], d['ttft_ms']))"; }
ttft() { for r in $(seq $2); do one $1 $OLD BLUESHIFT_GATED_GEMM=$(gate $1) old; one $1 $BS A=1 new; done; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
for m in m1q m1f; do check $m; ttft $m 3; done
rm -rf /tmp/m1q /tmp/m1f
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
check m8q; ttft m8q 2
echo "all done $(( $(date +%s) - t0 )) s"
