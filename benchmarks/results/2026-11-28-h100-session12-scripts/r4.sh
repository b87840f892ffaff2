#!/usr/bin/env bash
# Session 12, run R4: (a) the layers' norms and the gated activation write only the f16 copy their GEMM reads
# (rms_norm_f16, gated_act_f16; BLUESHIFT_F16_ONLY=0 for the old kernels): logits bit for bit, TTFT A/B;
# (b) flash attention in 64-key blocks for head_dim 64 (BLUESHIFT_FA_KB=64): test_gpu's float64 check, logits
# against 32-key blocks, TTFT A/B on the 1B q4_k_m / f16; the 8B q4_k_m for (a).
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
  grep -E "internal|rror" /tmp/err.txt | head -3
}
plog() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift logits --model /tmp/$m --tokens $P --out /tmp/pl-$m-$lab.npy >/dev/null 2>/tmp/perr.txt || { echo "$m $lab: logits FAILED"; head -3 /tmp/perr.txt; }; }
ids() { local m=$1 lab=$2; shift 2; env "$@" $BS blueshift generate --model /tmp/$m --prompt-tokens $P --temperature 0 --ignore-eos --max-tokens 32 > /tmp/ids-$m-$lab.txt 2>/dev/null; }
timeout 60 $BS test_gpu --gtest_filter='*TensorCoreAttention*:*Hazards*' 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|nmse" | head -10
stamp "test_gpu"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h1 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/h1 /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/h1
stamp "1B models"
for m in m1q m1f; do
  plog $m only; plog $m both BLUESHIFT_F16_ONLY=0; plog $m kb64 BLUESHIFT_FA_KB=64
  cmp -s /tmp/pl-$m-only.npy /tmp/pl-$m-both.npy && echo "$m prefill logits (300 rows): f16 only == both, bit for bit" \
    || { echo "$m f16-only logits DIFFER"; python3 .dev/s12/cmp.py /tmp/pl-$m-only.npy /tmp/pl-$m-both.npy; }
  echo -n "$m kb64 vs kb32: "; python3 .dev/s12/cmp.py /tmp/pl-$m-kb64.npy /tmp/pl-$m-only.npy
  rm -f /tmp/pl-$m-*.npy
  ids $m kb32; ids $m kb64 BLUESHIFT_FA_KB=64
  cmp -s /tmp/ids-$m-kb32.txt /tmp/ids-$m-kb64.txt && echo "$m greedy ids (32 after 300): kb64 == kb32" || echo "$m greedy ids: kb64 differs from kb32"
done
for m in m1q m1f; do
  bench $m base; bench $m both BLUESHIFT_F16_ONLY=0; bench $m kb64 BLUESHIFT_FA_KB=64
  bench $m base2; bench $m both2 BLUESHIFT_F16_ONLY=0; bench $m kb64-2 BLUESHIFT_FA_KB=64
done
BLUESHIFT_FA_KB=64 timeout 60 $BS bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 --warm 30 > $OUT/profile-m1q-kb64.txt 2>&1; head -10 $OUT/profile-m1q-kb64.txt
stamp "1B done"; rm -rf /tmp/m1f
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/h8 --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h8 /tmp/m8q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h8
stamp "8B q4_k_m"
bench m8q base; bench m8q both BLUESHIFT_F16_ONLY=0; bench m8q base2; bench m8q both2 BLUESHIFT_F16_ONLY=0
stamp "all done"
