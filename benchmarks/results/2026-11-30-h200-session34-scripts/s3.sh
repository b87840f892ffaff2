#!/usr/bin/env bash
# S3 (session 34), exploratory: (a) the f16 models on the persistent kernel again (BLUESHIFT_PERSISTENT=1; off by
# default for F16 layers since session 17), 1B and 8B; (b) the 1B q4_k_m head's shape with the argmax folded in
# (BLUESHIFT_HEAD_ROWS 4 / 8, BLUESHIFT_HEAD_WG 32 / 64); (c) session 33's R9 on the 8B q4_k_m: persistent_phases.sh
# with NORM_SLOTS on and off. bench 512 + 128, medians of 5, base first and last. Carry .gl and .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/s3
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json f16 /tmp/m
  o=/tmp/s3/$cfg-f16; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  ab_bench $o base1 $BS /tmp/m/m 512 128 5
  ab_bench $o persistent $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT=1
  ab_bench $o base2 $BS /tmp/m/m 512 128 5
  stamp "$cfg f16 done"
  tar -C /tmp -cJf $OUT/s3.tar.xz s3
done
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m
o=/tmp/s3/llama-3.2-1b-q4_k_m; mkdir -p $o
$BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
ab_bench $o base1 $BS /tmp/m/m 512 128 5
ab_bench $o rows8 $BS /tmp/m/m 512 128 5 BLUESHIFT_HEAD_ROWS=8
ab_bench $o wg64 $BS /tmp/m/m 512 128 5 BLUESHIFT_HEAD_WG=64
ab_bench $o wg64rows8 $BS /tmp/m/m 512 128 5 BLUESHIFT_HEAD_WG=64 BLUESHIFT_HEAD_ROWS=8
ab_bench $o base2 $BS /tmp/m/m 512 128 5
python3 - $o <<'PY'
import json, sys
for n in ("base1", "rows8", "wg64", "wg64rows8", "base2"):
    d = json.load(open(f"{sys.argv[1]}/{n}.json"))
    h = next(v for k, v in d["gpu_ms_by_dispatch"].items() if k.startswith("matvec q6k 128256"))
    print(f"  {n:10s} {d['decode_tok_s']:8.1f} tok/s, head {h * 1000:.1f} us")
PY
stamp "1B head done"
tar -C /tmp -cJf $OUT/s3.tar.xz s3
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m
echo "== 8B q4_k_m, NORM_SLOTS on"
benchmarks/persistent_phases.sh $BS /tmp/m/m 32 | tee /tmp/s3/8b-phases-ns.txt
echo "== 8B q4_k_m, NORM_SLOTS off"
BLUESHIFT_PERSISTENT_NORM_SLOTS=0 benchmarks/persistent_phases.sh $BS /tmp/m/m 32 | tee /tmp/s3/8b-phases-floats.txt
stamp "8B phases done"
tar -C /tmp -cJf $OUT/s3.tar.xz s3
