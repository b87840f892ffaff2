#!/usr/bin/env bash
# Session 12, run R3: the o and down projections' split-k planes summed by the norm after them
# (rms_norm_planes_f32_f16) against splitk_reduce (BLUESHIFT_SPLITK_DEFER=0): prefill logits bit for bit, TTFT A/B
# (1B q4_k_m / f16, 8B q4_k_m), test_coopmat at this tree (the fused try of R2 reverted).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
P=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(128000)) for _ in range(300)))")
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 90 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
    > $OUT/bench-$m-$lab.json 2> /tmp/err.txt
  python3 - $OUT/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
try: d = json.load(open(sys.argv[1]))
except Exception as e: print(sys.argv[2], sys.argv[3], "FAILED", e); sys.exit()
print(f"{sys.argv[2]} {sys.argv[3]:10s} ttft {d['ttft_ms']:6.2f} rec {d['prefill_record_ms']:5.2f} gpu {d['prefill_gpu_ms']:6.2f} | prefill {d['prefill_tok_s']:8.0f} tok/s | decode {d['decode_tok_s']:7.1f} {d['pct_of_peak']:5.1f}% peak {d['peak_gb_s']:5.0f}")
PY
}
plog() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/pl-$m-$lab.npy >/dev/null 2>&1 || echo "$m $lab: logits FAILED"; }
timeout 150 $BS test_coopmat > $OUT/test_coopmat.txt 2>&1; grep -E "^\[  (PASSED|FAILED|SKIPPED) " $OUT/test_coopmat.txt
stamp "test_coopmat"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
for m in m1q m1f; do
  plog $m defer; plog $m reduce BLUESHIFT_SPLITK_DEFER=0
  cmp -s /tmp/pl-$m-defer.npy /tmp/pl-$m-reduce.npy && echo "$m prefill logits (300 rows): defer == reduce, bit for bit" \
    || { echo "$m prefill logits DIFFER"; python3 .dev/s12/cmp.py /tmp/pl-$m-defer.npy /tmp/pl-$m-reduce.npy; }
  rm -f /tmp/pl-$m-*.npy
done
for m in m1q m1f; do
  bench $m defer; bench $m reduce BLUESHIFT_SPLITK_DEFER=0; bench $m defer2; bench $m reduce2 BLUESHIFT_SPLITK_DEFER=0
done
timeout 60 $BS bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 --warm 30 > $OUT/profile-m1q.txt 2>&1; head -11 $OUT/profile-m1q.txt
stamp "1B done"; rm -rf /tmp/m1f
stamp "all done"
