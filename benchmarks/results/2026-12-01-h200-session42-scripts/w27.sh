#!/usr/bin/env bash
# W27 (session 42): the int8 Q6_K head's shape in the model (BLUESHIFT_HEAD_ROWS, BLUESHIFT_HEAD_WG; default 4 rows, 32
# invocations), last chosen for the float wide form (session 29) and kept when the int8 form came (session 33, R4,
# isolated at wg 32). An int8 part is 64 weights: the 1B's 2,048 columns are 32 parts (one a lane at wg 32), the 8B's
# 4,096 are 64 (two a lane at 32, one at 64).
# Predicted: the 1B best at (4, 32) within 2 us of (8, 32); the 8B at wg 64 -5..-15 us on the head (one part a lane:
# its loads all issued at once), (2, *) slower (x's loads over fewer rows).
# Carry .gl, .dev/carry (c42c5f8's tree = 8b2f92e's kernels).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w27 $OUT
row() {  # NAME JSON
  python3 - "$2" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpu_ms_by_dispatch"]
h = next((v for n, v in g.items() if n.startswith("matvec") and "128256" in n), 0)
print(f"{sys.argv[2]:18s} {d['decode_tok_s']:8.1f} tok/s  head {h*1e3:6.1f} us")
PY
}
for spec in llama-3.2-1b:"4:32 2:32 8:32 8:64" llama-3.1-8b:"4:32 2:32 8:32 4:64 8:64 2:64"; do
  cfg=${spec%%:*} shapes=${spec#*:}
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w27/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: head (rows:wg), 512 + 128, 5 reps"
  for r in a b; do
    for s in $shapes; do
      n=r${s%%:*}-wg${s#*:}-$r
      env BLUESHIFT_HEAD_ROWS=${s%%:*} BLUESHIFT_HEAD_WG=${s#*:} timeout 60 $BS blueshift bench --model /tmp/m/m \
        --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $o/$n.json 2>/dev/null && row $n $o/$n.json
    done
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w27.tar.xz w27
done
