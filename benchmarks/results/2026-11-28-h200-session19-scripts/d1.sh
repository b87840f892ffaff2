#!/usr/bin/env bash
# Session 19, call 1. (1) test_kernels on the H200 (session 18's prepared next-n1: the Moe tests after 376a486, and
# the new Matvec.QkvInOneDispatch). (2) q, k and v in one decode dispatch (matvec_f16_qkv; BLUESHIFT_QKV_FUSED 1 vs
# 0): decode logits (--step) bit for bit both ways, HF parity, decode alternating (predicted: 1B f16 +8-13%, 8B f16
# +6-9%: the k and v matvecs alone run at 0.2-0.6 TB/s in the profile). (3) The matvec butterfly on the 8B f16
# (BLUESHIFT_MATVEC_TREDUCE=0 against the default) and the F16 matvec pipelines' registers (BLUESHIFT_PIPELINE_STATS).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
LD_LIBRARY_PATH=/tmp/bs/bundle/lib timeout 150 .dev/s19t/test_kernels > /tmp/o/test_kernels.txt 2>&1
grep -E "^\[  (PASSED|FAILED)|tests ran|FAILED  \]" /tmp/o/test_kernels.txt | head -20
stamp "test_kernels"
row() { local tag=$1 m=$2 pt=$3; shift 3; env "$@" timeout 90 $BS blueshift bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));g=d['gpu_ms_by_dispatch'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% dispatches {d[\"dispatches_per_token\"]}  prefill {d[\"prefill_tok_s\"]:.0f} ttft {d[\"ttft_ms\"]:.2f}');print('   ', {k:round(v,3) for k,v in g.items() if 'matvec' in k or 'att' in k})" 2>&1 | tail -2; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models1
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(200)))")
$BS blueshift logits --model /tmp/m1f --tokens $P --step --out /tmp/l1.npy >/dev/null 2>&1 || echo "logits FAILED"
BLUESHIFT_QKV_FUSED=0 $BS blueshift logits --model /tmp/m1f --tokens $P --step --out /tmp/l0.npy >/dev/null 2>&1 || echo "logits 0 FAILED"
cmp -s /tmp/l1.npy /tmp/l0.npy && echo "m1f decode logits (--step, 200 rows), fused against three dispatches: identical" || echo "m1f decode logits DIFFER"
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
stamp checks
for i in 1 2 3; do row m1f-fused-$i /tmp/m1f 512; row m1f-three-$i /tmp/m1f 512 BLUESHIFT_QKV_FUSED=0; done
stamp decode1
tar -C /tmp -cJf $OUT/d1.tar.xz o
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models8
for i in 1 2; do row m8f-fused-$i /tmp/m8f 512; row m8f-three-$i /tmp/m8f 512 BLUESHIFT_QKV_FUSED=0; row m8f-notr-$i /tmp/m8f 512 BLUESHIFT_MATVEC_TREDUCE=0; done
stamp decode8
tar -C /tmp -cJf $OUT/d1.tar.xz o
for tr in 1 0; do echo "-- BLUESHIFT_MATVEC_TREDUCE=$tr"
  BLUESHIFT_MATVEC_TREDUCE=$tr BLUESHIFT_PIPELINE_STATS=1 timeout 60 $BS blueshift bench --model /tmp/m8f --prompt-tokens 16 --gen-tokens 32 --reps 1 \
    --json 2>&1 >/dev/null | grep "pipeline-stats" | grep -i "matvec_f16" | head -12; done
stamp stats
