#!/usr/bin/env bash
# Session 10, run A1: where the 1B's prefill goes at busy-GPU clocks (bs_prefill_profile --warm), and where the
# persistent decode kernel's step goes now (BLUESHIFT_PERSISTENT_SKIP), 1B q4_k_m and f16.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
t0=$(date +%s)
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1f --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
echo "models $(( $(date +%s) - t0 )) s"
for m in m1q m1f; do
  for w in 0 30; do
    timeout 60 $BS bs_prefill_profile /tmp/$m --tokens 512 --reps 3 --warm $w > $OUT/profile-$m-warm$w.txt 2>&1
    grep -E "profiled" $OUT/profile-$m-warm$w.txt
  done
  head -20 $OUT/profile-$m-warm30.txt
done
bench() {  # model label env...
  local m=$1 lab=$2; shift 2
  env "$@" timeout 60 $BS blueshift bench --model /tmp/$m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $OUT/bench-$m-$lab.json 2>/dev/null
  python3 - $OUT/bench-$m-$lab.json $m $lab <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = d.get("gpu_ms_by_dispatch", {})
top = sorted(k.items(), key=lambda t: -t[1])[:4]
print(f"{sys.argv[2]} {sys.argv[3]:10s} prefill {d['prefill_tok_s']:8.0f} ttft {d['ttft_ms']:6.2f} decode {d['decode_tok_s']:7.1f} step-gpu {sum(d.get('gpu_ms_by_kernel',{}).values()):.3f} ms |",
      ", ".join(f"{n} {v:.3f}" for n, v in top))
PY
}
for m in m1q m1f; do
  bench $m base
  bench $m persist BLUESHIFT_PERSISTENT=1
  for s in 2 31 63; do bench $m skip$s BLUESHIFT_PERSISTENT=1 BLUESHIFT_PERSISTENT_SKIP=$s; done
done
echo "all done $(( $(date +%s) - t0 )) s"
