#!/usr/bin/env bash
# S5 (session 34): is the int8 Q6_K head bound by workgroup launches? Its 128256 rows at 4 a workgroup of 32 are 32,064
# workgroups, ~243 a SM in ~75 us (1B). The head now takes row groups grid-stride where the dispatch is smaller
# (BLUESHIFT_HEAD_GROUPS=N). 1B and 8B q4_k_m, N = 0 (one a group) / 528 / 1056 / 2112 / 4224 (32 a SM, the most
# resident), against d82a83f ($OLD: the same head without the loop). Predicted: launch-bound -> the head 75 -> ~60 us
# on the 1B (decode +2%) from ~1056 groups; else even or worse. bench 512 + 128, medians of 5. Carry .gl, .dev/carry,
# .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/s5
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/s5/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  ab_bench $o old1 $OLD /tmp/m/m 512 128 5
  ab_bench $o g0 $BS /tmp/m/m 512 128 5
  for n in 528 1056 2112 4224; do ab_bench $o g$n $BS /tmp/m/m 512 128 5 BLUESHIFT_HEAD_GROUPS=$n; done
  ab_bench $o old2 $OLD /tmp/m/m 512 128 5
  python3 - $o <<'PY'
import json, sys
for n in ("old1", "g0", "g528", "g1056", "g2112", "g4224", "old2"):
    d = json.load(open(f"{sys.argv[1]}/{n}.json"))
    h = next(v for k, v in d["gpu_ms_by_dispatch"].items() if k.startswith("matvec q6k 128256"))
    print(f"  {n:6s} {d['decode_tok_s']:8.1f} tok/s, head {h * 1000:.1f} us")
PY
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/s5.tar.xz s5
done
