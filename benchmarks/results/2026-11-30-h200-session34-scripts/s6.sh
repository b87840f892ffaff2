#!/usr/bin/env bash
# S6 (session 34): the int8 head with every row's words requested before any row's math (matvec_q6k.comp
# MV_LOADS_FIRST, in matvec_q6k_wide_i8_argmax) against fca38e3 ($OLD, .dev/carry2). Predicted: even if the driver
# already hoists the loads; else the head 75 -> 60-65 us on the 1B (decode +1.5%). The head's registers from the
# driver's statistics (BLUESHIFT_PIPELINE_STATS=1). 1B and 8B q4_k_m, bench 512 + 128, medians of 5, alternating.
# Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/s6
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/s6/$cfg; mkdir -p $o
  for r in OLD BS; do
    BLUESHIFT_PIPELINE_STATS=1 ${!r} blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 4 --reps 1 --json \
      2>&1 >/dev/null | grep -E "pipeline-stats matvec_q6k_wide_i8" | head -2 | sed "s/^/  $r: /" | cut -c1-200
  done
  for i in 1 2; do
    ab_bench $o old$i $OLD /tmp/m/m 512 128 5
    ab_bench $o new$i $BS /tmp/m/m 512 128 5
  done
  python3 - $o <<'PY'
import json, sys
for n in ("old1", "new1", "old2", "new2"):
    d = json.load(open(f"{sys.argv[1]}/{n}.json"))
    h = next(v for k, v in d["gpu_ms_by_dispatch"].items() if k.startswith("matvec q6k 128256"))
    print(f"  {n:5s} {d['decode_tok_s']:8.1f} tok/s, head {h * 1000:.1f} us")
PY
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/s6.tar.xz s6
done
