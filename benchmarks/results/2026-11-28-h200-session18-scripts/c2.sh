#!/usr/bin/env bash
# Session 18, call 2. Decode: the pair butterfly (PAIR_SUM 1 vs 0) on 1B and 8B q4_k_m, and WG 416 on the 1B.
# Prefill: where the 1B's q/k/v and split-k time goes (SPLITK=0, QKV_TOGETHER=0; GEMM tiles for a fused q/k/v shape),
# and the current per-dispatch profile.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
row() { local tag=$1 m=$2 pt=$3; shift 3; env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d.get('gpu_ms_by_dispatch',{});print(f'$tag: ttft {d[\"ttft_ms\"]:.2f} pgpu {d[\"prefill_gpu_ms\"]:.2f} prefill {d[\"prefill_tok_s\"]:.0f} decode {d[\"decode_tok_s\"]:.1f} tok/s pk {k.get(\"decode_persistent\",0):.4f}')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models1
for i in 1 2; do
  row 1q-pair1-$i /tmp/m1q 16; row 1q-pair0-$i /tmp/m1q 16 BLUESHIFT_PERSISTENT_PAIR_SUM=0; row 1q-wg416-$i /tmp/m1q 16 BLUESHIFT_PERSISTENT_WG=416
done
stamp decode1
for i in 1 2; do
  for m in m1f m1q; do
    row $m-def-$i /tmp/$m 512; row $m-nosplit-$i /tmp/$m 512 BLUESHIFT_MATMUL_SPLITK=0; row $m-qkvsep-$i /tmp/$m 512 BLUESHIFT_QKV_TOGETHER=0
  done
done
stamp prefill1
timeout 60 $BS bs_prefill_profile /tmp/m1f --tokens 512 --reps 3 --warm 30 > /tmp/o/prof-m1f.txt 2>&1; head -40 /tmp/o/prof-m1f.txt
timeout 60 $BS bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 --warm 30 > /tmp/o/prof-m1q.txt 2>&1; head -14 /tmp/o/prof-m1q.txt
stamp profiles
timeout 100 $BS bs_gemv_bench --matmul 512 --dtype f16 --shape 3072x2048,2048x2048,512x2048,6144x4096,4096x4096,1024x4096 --rounds 2 --reps 20 > /tmp/o/gemm.txt 2>&1; cat /tmp/o/gemm.txt | grep -v "^ *$" | head -60
stamp gemm
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
stamp models8
for i in 1 2; do row 8q-pair1-$i /tmp/m8q 16; row 8q-pair0-$i /tmp/m8q 16 BLUESHIFT_PERSISTENT_PAIR_SUM=0; done
stamp decode8
tar -C /tmp -cJf $OUT/c2.tar.xz o
