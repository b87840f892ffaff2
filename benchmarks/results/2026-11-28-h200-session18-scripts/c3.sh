#!/usr/bin/env bash
# Session 18, call 3: the residual's split-k planes summed in by the next norm (BLUESHIFT_RESIDUAL_PLANES 1 vs 0):
# prefill logits bit for bit both ways, HF parity, TTFT / prefill GPU time alternating (1B f16 and q4_k_m), the
# per-dispatch profile; the F16 plain matvec rows default (2) against 4 on the 1B f16 decode.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
row() { local tag=$1 m=$2 pt=$3; shift 3; env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));print(f'$tag: ttft {d[\"ttft_ms\"]:.2f} pgpu {d[\"prefill_gpu_ms\"]:.3f} prefill {d[\"prefill_tok_s\"]:.0f} decode {d[\"decode_tok_s\"]:.1f} tok/s')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
stamp models1
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
for m in m1f m1q; do
  $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/l1.npy >/dev/null 2>/tmp/o/l1.err || echo "$m logits FAILED"
  BLUESHIFT_RESIDUAL_PLANES=0 $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/l0.npy >/dev/null 2>&1 || echo "$m logits 0 FAILED"
  cmp -s /tmp/l1.npy /tmp/l0.npy && echo "$m prefill logits (300 rows): identical both ways" || echo "$m prefill logits DIFFER"
done
echo "== HF parity"; python3 benchmarks/parity_check.py $BS $SHARED/data/models llama-tiny phi3-tiny 2>&1 | tail -6
stamp checks
for i in 1 2 3; do
  for m in m1f m1q; do row $m-fold-$i /tmp/$m 512; row $m-nofold-$i /tmp/$m 512 BLUESHIFT_RESIDUAL_PLANES=0; done
done
stamp prefill
for i in 1 2; do row m1f-r2-$i /tmp/m1f 16; row m1f-r4-$i /tmp/m1f 16 BLUESHIFT_MATVEC_ROWS=4; done
stamp decode
timeout 60 $BS bs_prefill_profile /tmp/m1f --tokens 512 --reps 3 --warm 30 > /tmp/o/prof-m1f.txt 2>&1; head -10 /tmp/o/prof-m1f.txt
stamp done
tar -C /tmp -cJf $OUT/c3.tar.xz o
