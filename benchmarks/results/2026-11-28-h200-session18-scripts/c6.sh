#!/usr/bin/env bash
# Session 18, call 6 (the last). (1) q, k and v summed from their split-k planes by rope_kv (BLUESHIFT_QKV_PLANES 1 vs
# 0): prefill logits bit for bit both ways, TTFT / prefill GPU time alternating, three rounds (predicted: 1B f16
# 7.95 -> ~7.85 ms GPU, q4_k_m 8.92 -> ~8.82). (2) The matvec epilogue's transposed butterfly (matvec.glsl
# MV_TREDUCE): this tree's blueshift against the same tree built without it (blueshift_notr), decode alternating, two
# rounds, 1B f16, 8B f16 and 1B q4_k_m (its head) (predicted: 1B f16 +1-2%, 8B f16 +0.5-1%, 1B q4_k_m within 0.5%).
# (3) HF parity.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
xz -dc .dev/s18/blueshift_notr.xz > /tmp/bs/bundle/bin/blueshift_notr && chmod +x /tmp/bs/bundle/bin/blueshift_notr
row() { local tag=$1 prog=$2 m=$3 pt=$4; shift 4; env "$@" timeout 60 $BS $prog bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));print(f'$tag: ttft {d[\"ttft_ms\"]:.2f} pgpu {d[\"prefill_gpu_ms\"]:.3f} prefill {d[\"prefill_tok_s\"]:.0f} decode {d[\"decode_tok_s\"]:.1f} tok/s')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models1
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
for m in m1f m1q; do
  $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/l1.npy >/dev/null 2>&1 || echo "$m logits FAILED"
  BLUESHIFT_QKV_PLANES=0 BLUESHIFT_RESIDUAL_PLANES=0 $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/l0.npy >/dev/null 2>&1 || echo "$m logits 0 FAILED"
  cmp -s /tmp/l1.npy /tmp/l0.npy && echo "$m prefill logits (300 rows), both folds against neither: identical" || echo "$m prefill logits DIFFER"
done
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
stamp checks
for i in 1 2 3; do
  for m in m1f m1q; do row $m-qkv1-$i blueshift /tmp/$m 512; row $m-qkv0-$i blueshift /tmp/$m 512 BLUESHIFT_QKV_PLANES=0; done
done
timeout 60 $BS bs_prefill_profile /tmp/m1f --tokens 512 --reps 3 --warm 30 > /tmp/o/prof-m1f.txt 2>&1; head -10 /tmp/o/prof-m1f.txt
stamp prefill
tar -C /tmp -cJf $OUT/c6.tar.xz o
for i in 1 2; do
  row m1f-tr-$i blueshift /tmp/m1f 16; row m1f-notr-$i blueshift_notr /tmp/m1f 16
  row m1q-tr-$i blueshift /tmp/m1q 16; row m1q-notr-$i blueshift_notr /tmp/m1q 16
done
stamp decode1
tar -C /tmp -cJf $OUT/c6.tar.xz o
rm -rf /tmp/m1q
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models8
for i in 1 2; do row m8f-tr-$i blueshift /tmp/m8f 16; row m8f-notr-$i blueshift_notr /tmp/m8f 16; done
stamp decode8
tar -C /tmp -cJf $OUT/c6.tar.xz o
