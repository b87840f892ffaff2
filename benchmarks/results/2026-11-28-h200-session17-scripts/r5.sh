#!/usr/bin/env bash
# Session 17 R5 (the tree with the two defaults R4 measured flipped: F16 gate/up 2 rows a workgroup, serve's joiners
# overlapped). A second round of each A/B through the new defaults. Predicted: 1B f16 decode ~+3% against
# BLUESHIFT_GATED_ROWS=4; serve's server TTFT p50 ~-4%, p95 ~-9% against BLUESHIFT_SERVE_JOIN_OVERLAP=0.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
B="bench --prompt-tokens 512 --gen-tokens 128 --reps 3 --json"
row() { local tag=$1 m=$2; shift 2; env "$@" timeout 40 $BS blueshift $B --model $m > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d.get('gpu_ms_by_kernel',{});print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s, ttft {d[\"ttft_ms\"]:.2f} ms', {a:round(b,3) for a,b in k.items()})" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B f16"
for i in 1 2; do row m1f-new-$i /tmp/m1f; row m1f-gr4-$i /tmp/m1f BLUESHIFT_GATED_ROWS=4; done
stamp "gated rows"
tar -C /tmp -cJf $OUT/r5.tar.xz o
sed -i 's/for ov in 0 1; do/for ov in 1 0; do/; s/for i in 1 2; do/for i in 1; do/' .dev/s17/s13.sh
timeout 120 bash .dev/s17/s13.sh 2>&1 | grep -o '"label": "[^"]*".*"server_ttft_ms_p95": [0-9.]*' 
tar -C /tmp -cJf $OUT/r5.tar.xz o
stamp done
