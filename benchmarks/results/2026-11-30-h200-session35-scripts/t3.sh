#!/usr/bin/env bash
# T3 (session 35), tree 26a42df (+ comment and help-text changes only): two env-only A/Bs.
# - The int8 Q6_K head at 2 rows a workgroup (BLUESHIFT_HEAD_ROWS=2) against its 4: session 34 found the head at 80
#   registers (25 warps a SM); 2 rows hold half the weight words. Predicted: if warps bind it, 75 -> 65-70 us (1B) and
#   147 -> 130-140 (8B); if x's reloads (twice the workgroups, each loading its 4.6 KB form) bind it, slower.
# - The 8B f16's per-phase read-ahead (BLUESHIFT_PREFETCH_KB; 8 MiB by default, set in session 19 on older kernels): 0,
#   4 and 16 MiB. Predicted: 8 MiB still best within 1%.
# bench 512 + 128, medians of 5, variants alternating, the base first and last. Carry .gl and .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t3
head_us() {
  python3 - "$@" <<'PY'
import json, sys
o = sys.argv[1]
for n in sys.argv[2:]:
    d = json.load(open(f"{o}/{n}.json"))
    s = {k: round(v * 1000, 1) for k, v in d["gpu_ms_by_dispatch"].items() if k.startswith(("matvec q6k 128256", "matvec f16 128256", "sample", "prefetch"))}
    print(f"  {n:10s} {d['decode_tok_s']:8.1f} tok/s, p50 {d['decode_ms_per_token_p50']:.4f} ms, {d['pct_of_peak']:.1f}% of peak, us: {s}")
PY
}
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t3/$cfg-q4_k_m; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  ab_bench $o base1 $BS /tmp/m/m 512 128 5
  ab_bench $o rows2 $BS /tmp/m/m 512 128 5 BLUESHIFT_HEAD_ROWS=2
  ab_bench $o base2 $BS /tmp/m/m 512 128 5
  ab_bench $o rows2b $BS /tmp/m/m 512 128 5 BLUESHIFT_HEAD_ROWS=2
  head_us $o base1 rows2 base2 rows2b
  for v in 4 2; do
    BLUESHIFT_HEAD_ROWS=$v BLUESHIFT_PIPELINE_STATS=1 $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 4 \
      --reps 1 --json 2>&1 >/dev/null | grep "matvec_q6k_wide_i8" | head -1 | sed "s/^/  rows $v: /" | cut -c1-300
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t3.tar.xz t3
done
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.1-8b.json f16 /tmp/m
o=/tmp/t3/llama-3.1-8b-f16; mkdir -p $o
stamp "8B f16 converted"
$BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
echo "== llama-3.1-8b f16"
ab_bench $o base1 $BS /tmp/m/m 512 128 5
ab_bench $o kb0 $BS /tmp/m/m 512 128 5 BLUESHIFT_PREFETCH_KB=0
ab_bench $o kb4096 $BS /tmp/m/m 512 128 5 BLUESHIFT_PREFETCH_KB=4096
ab_bench $o kb16384 $BS /tmp/m/m 512 128 5 BLUESHIFT_PREFETCH_KB=16384
ab_bench $o base2 $BS /tmp/m/m 512 128 5
head_us $o base1 kb0 kb4096 kb16384 base2
stamp "8B f16 done"
tar -C /tmp -cJf $OUT/t3.tar.xz t3
