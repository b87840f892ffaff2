#!/usr/bin/env bash
# Session 18, call 4. (1) The residual fold again, its planes loaded before any store (predicted: 1B f16 prefill GPU
# 8.00 -> ~7.86 ms, q4_k_m 9.00 -> ~8.86; logits identical both ways). (2) The final table: run_peer.sh, 1B and 8B,
# q4_k_m and f16, beside llama.cpp's Vulkan backend, with the fold on only if it won in (1).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/peer-out
row() { local tag=$1 m=$2 pt=$3; shift 3; env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens $pt --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /tmp/o/$tag.err
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));print(f'$tag: ttft {d[\"ttft_ms\"]:.2f} pgpu {d[\"prefill_gpu_ms\"]:.3f} prefill {d[\"prefill_tok_s\"]:.0f} decode {d[\"decode_tok_s\"]:.1f} tok/s')" 2>&1 | tail -1; }
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
for m in m1f m1q; do
  $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/l1.npy >/dev/null 2>&1 || echo "$m logits FAILED"
  BLUESHIFT_RESIDUAL_PLANES=0 $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/l0.npy >/dev/null 2>&1 || echo "$m logits 0 FAILED"
  cmp -s /tmp/l1.npy /tmp/l0.npy && echo "$m prefill logits (300 rows): identical both ways" || echo "$m prefill logits DIFFER"
done
for i in 1 2 3; do
  for m in m1f m1q; do row $m-fold-$i /tmp/$m 512; row $m-nofold-$i /tmp/$m 512 BLUESHIFT_RESIDUAL_PLANES=0; done
done
timeout 60 $BS bs_prefill_profile /tmp/m1f --tokens 512 --reps 3 --warm 30 > /tmp/o/prof-m1f.txt 2>&1; head -10 /tmp/o/prof-m1f.txt
win=$(python3 - <<'PY'
import json, statistics as st
def med(t): return st.median(json.load(open(f"/tmp/o/{t}-{i}.json"))["prefill_gpu_ms"] for i in (1, 2, 3))
print(1 if all(med(f"{m}-fold") < med(f"{m}-nofold") for m in ("m1f", "m1q")) else 0)
PY
)
echo "fold wins on both: $win"
[ "$win" = 1 ] || export BLUESHIFT_RESIDUAL_PLANES=0
rm -rf /tmp/m1f /tmp/m1q
stamp "fold"
tar -C /tmp -cJf $OUT/c4.tar.xz o
timeout 150 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.2-1b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "1B peer"
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/c4.tar.xz o
timeout $(( 540 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
  --config benchmarks/configs/llama-3.1-8b.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -2
stamp "8B peer"
cat /tmp/peer-out/peer.md
cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/c4.tar.xz o
