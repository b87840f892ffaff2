#!/usr/bin/env bash
# W33 (session 43): W32's NORM_SLOTS 2 against 1 on the Qwen2.5 shapes (hidden 1,536 and 3,584, q/k/v biases; Q4_K_M's
# Q6_K v in half the layers), 512 + 128, 5 reps, alternated.
# Predicted: +0.3..+0.8% on both (as W32's Llama rows); --deterministic ids the same or parting late at a near-tie.
# Carry .gl, .dev/carry (43a33c6's tree).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w33 $OUT
V="ns2: ns1:BLUESHIFT_PERSISTENT_NORM_SLOTS=1"
for cfg in qwen2.5-1.5b qwen2.5-7b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w33/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: 512 + 128, 5 reps"
  for r in a b c; do
    for v in $V; do
      ab_variant $BS "$v"
      ab_bench $o $ab_name-$r $ab_run /tmp/m/m 512 128 5 "${ab_env[@]}"
    done
  done
  for v in $V; do
    ab_variant $BS "$v"; ab_ids $o/ids-$ab_name.txt $ab_run /tmp/m/m "${ab_env[@]}"
  done
  python3 - $o/ids-ns1.txt $o/ids-ns2.txt <<'PY'
import sys
a, b = (open(f).read().split() for f in sys.argv[1:])
i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), None)
print("ids (--deterministic): same" if i is None and len(a) == len(b) else f"ids part at token {i} of {len(a)}")
PY
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w33.tar.xz w33
done
