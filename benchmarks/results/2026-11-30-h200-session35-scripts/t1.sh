#!/usr/bin/env bash
# T1 (session 35): session 34's next-t1 in one command with two more A/Bs.
# - DOWN_SPLIT (t1-down-split.patch, session 34's next-down-split.patch, on 26a42df): the down projection's tasks
#   split in S column parts that add into x by float atomics, so the 8B's 2,048 tasks of 14 steps on 2,640 subgroups
#   (22% idle) spread over the whole grid.
#   Predicted: 8B +3-4.5% at S 7-14 if the steps bind P5; even or worse if 1-2 step tasks lose PIPE's overlap.
# - $OLD = the same tree with kArgmaxSliceRows 128 (params.h; 512 in $BS): ~4x fewer atomics on each key's line in
#   the head. Predicted: head -1 to -2 us, +0.1-0.2% tok/s (1B), within noise on the 8B.
# - --deterministic (no float-atomic o fold) beside the default. Session 30 measured FOLD_O=0 at -4.4% (1B), -3.9% (8B).
# bench 512 + 128, medians of 5, variants alternating, the base first and last.
# Carry .gl, .dev/carry (26a42df + patch) and .dev/carry2 (the same with kArgmaxSliceRows 128, no lib).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t1
head_us() {  # the head's and the sampler's GPU us in each listed row
  python3 - "$@" <<'PY'
import json, sys
o = sys.argv[1]
for n in sys.argv[2:]:
    d = json.load(open(f"{o}/{n}.json"))
    s = {k: round(v * 1000, 1) for k, v in d["gpu_ms_by_dispatch"].items() if k.startswith(("matvec", "sample", "decode_persistent"))}
    print(f"  {n:10s} {d['decode_tok_s']:8.1f} tok/s, p50 {d['decode_ms_per_token_p50']:.4f} ms, us: {s}")
PY
}
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/m
stamp "8B converted"
o=/tmp/t1/8b; mkdir -p $o
$BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
ab_bench $o base1 $BS /tmp/m/m 512 128 5
ab_bench $o s7 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_DOWN_SPLIT=7
ab_bench $o s14 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_DOWN_SPLIT=14
ab_bench $o slice128 $OLD /tmp/m/m 512 128 5
ab_bench $o s2 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_DOWN_SPLIT=2
ab_bench $o nofoldo $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_FOLD_O=0
ab_bench $o base2 $BS /tmp/m/m 512 128 5
env timeout 60 $BS blueshift bench --model /tmp/m/m --prompt-tokens 512 --gen-tokens 128 --reps 5 --deterministic --json > $o/det.json
head_us $o base1 s7 s14 slice128 s2 nofoldo base2 det
for s in 1 14; do
  echo "== 8B phases, DOWN_SPLIT $s"
  BLUESHIFT_PERSISTENT_DOWN_SPLIT=$s benchmarks/persistent_phases.sh $BS /tmp/m/m 32 | head -8
done
stamp "8B done"
tar -C /tmp -cJf $OUT/t1.tar.xz t1
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m
o=/tmp/t1/1b; mkdir -p $o
$BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
ab_bench $o base1 $BS /tmp/m/m 512 128 5
ab_bench $o slice128 $OLD /tmp/m/m 512 128 5
ab_bench $o team1s2 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TEAM=1 BLUESHIFT_PERSISTENT_DOWN_SPLIT=2
ab_bench $o team1 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TEAM=1
ab_bench $o team1s4 $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_TEAM=1 BLUESHIFT_PERSISTENT_DOWN_SPLIT=4
ab_bench $o slice128b $OLD /tmp/m/m 512 128 5
ab_bench $o base2 $BS /tmp/m/m 512 128 5
env timeout 60 $BS blueshift bench --model /tmp/m/m --prompt-tokens 512 --gen-tokens 128 --reps 5 --deterministic --json > $o/det.json
head_us $o base1 slice128 team1s2 team1 team1s4 slice128b base2 det
stamp "1B done"
tar -C /tmp -cJf $OUT/t1.tar.xz t1
