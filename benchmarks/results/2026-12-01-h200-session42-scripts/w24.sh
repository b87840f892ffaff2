#!/usr/bin/env bash
# W24 (session 42): the argmax heads stride their grid over the row groups (matvec_main.glsl; BLUESHIFT_HEAD_GRID=N
# dispatches N workgroups, 0 one a row group), and the sampler folded in counts workgroups, not row groups.
# W23: the fold that counted each of the 32,064 row-group workgroups in (a fence and a returning atomic at every
# workgroup's end) took the 1B head 75 -> 95 us, the 8B's 146 -> 154, the 1B f16's 127 -> 158: a loss of 1.7%, 0.5%,
# 2.0%. With a grid of G workgroups, that end cost is paid G times, once a workgroup.
# Predicted: the stride alone (fold off) at 4,224 (32 a multiprocessor, one wave) -2..-5 us on the head, at 1,056-2,112
# within +-5%; the fold at those grids: the head +2..4 us over the same grid without it, the sample dispatch (11.5 us)
# gone: the 1B q4_k_m -7..-9 us a token (+1.0..1.3%), 8B +0.2..0.35%. At grid 0 the fold's 32,064 counts on one word
# lose more than W23's.
# Carry .gl, .dev/carry (a bundle of the tree; check $BS_BUILD).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w24 $OUT
row() {  # NAME JSON
  python3 - "$2" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpu_ms_by_dispatch"]
k = next((v for n, v in g.items() if n.startswith("decode_persistent")), 0)
h = next((v for n, v in g.items() if n.startswith("matvec") and "128256" in n), 0)
print(f"{sys.argv[2]:22s} {d['decode_tok_s']:8.1f} tok/s  kernel {k*1e3:7.1f} us  head {h*1e3:6.1f} us  sample {g.get('sample', 0)*1e3:5.2f} us  dispatches {d['dispatches_per_token']}")
PY
}
for spec in llama-3.2-1b:q4_k_m llama-3.1-8b:q4_k_m llama-3.2-1b:f16; do
  cfg=${spec%%:*} q=${spec#*:}
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json $q /tmp/m
  o=/tmp/w24/$cfg-$q; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg $q: 512 + 128, 5 reps (fold / grid)"
  for round in a b; do
    for v in 0:0 0:4224 0:2112 0:1056 1:4224 1:2112 1:1056 1:0; do
      n=fold${v%%:*}-grid${v#*:}-$round
      env BLUESHIFT_HEAD_SAMPLE=${v%%:*} BLUESHIFT_HEAD_GRID=${v#*:} timeout 60 $BS blueshift bench --model /tmp/m/m \
        --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > $o/$n.json 2>/dev/null && row $n $o/$n.json
    done
  done
  ab_ids $o/ids-base.txt $BS /tmp/m/m BLUESHIFT_HEAD_SAMPLE=0
  for g in 4224 2112 1056; do
    ab_ids $o/ids-$g.txt $BS /tmp/m/m BLUESHIFT_HEAD_SAMPLE=1 BLUESHIFT_HEAD_GRID=$g
    cmp -s $o/ids-base.txt $o/ids-$g.txt && echo "  greedy ids, fold at $g: same" || echo "  greedy ids, fold at $g: DIFFER"
  done
  stamp "$cfg $q done"
  tar -C /tmp -cJf $OUT/w24.tar.xz w24
done
