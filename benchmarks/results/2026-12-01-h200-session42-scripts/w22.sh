#!/usr/bin/env bash
# W22 (session 42). Two questions in one call, on the 1B and 8B q4_k_m (synth --seed 1, convert).
# (a) The persistent long form's chunks a kv head (BLUESHIFT_PERSISTENT_LONG_CHUNKS; default G x splits = 16 on both,
#     one item a workgroup). Session 41 (W18-W19): the long form lost at 2,048 (1B -3.3%, 8B -1.4%) and on the 8B at
#     3,072 (-1.9%). Predicted: 8 chunks (64 items, full blocks, 8 partials): 2,048 1B -1..+1% against never, 8B
#     even..+1%; 4,096 within 1% of 16. 32 chunks (two items a workgroup): -2..-4% against 16 everywhere.
# (b) What the sampler's 11-13 us a token is (BLUESHIFT_SAMPLE_PROBE, timing only, wrong tokens): bit 0 no keys read,
#     bit 1 no embedding row, bit 2 no cancel word. Predicted: 7 leaves >= 7 us (the dispatch, its state and ring
#     writes); the keys and the row each 1-2 us. If 7 leaves >= 7 us, the sampler folded into the head's last
#     workgroup saves most of it.
# Carry .gl, .dev/carry (a bundle of the tree; check $BS_BUILD).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w22 $OUT
F=BLUESHIFT_LONG_DECODE_FROM
C=BLUESHIFT_PERSISTENT_LONG_CHUNKS
row() {  # NAME JSON: decode tok/s and the three dispatches' ms
  python3 - "$2" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpu_ms_by_dispatch"]
k = next((v for n, v in g.items() if n.startswith("decode_persistent")), 0)
h = next((v for n, v in g.items() if n.startswith("matvec")), 0)
print(f"{sys.argv[2]:24s} {d['decode_tok_s']:8.1f} tok/s  kernel {k*1e3:7.1f} us  head {h*1e3:6.1f} us  sample {g.get('sample', 0)*1e3:5.2f} us")
PY
}
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w22/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg q4_k_m: sampler probes, 512 + 128, 5 reps"
  for pr in 0 7 1 2 4 0 7; do
    env BLUESHIFT_SAMPLE_PROBE=$pr timeout 60 $BS blueshift bench --model /tmp/m/m --prompt-tokens 512 --gen-tokens 128 \
      --reps 5 --json > $o/probe$pr.json 2>/dev/null && row probe$pr $o/probe$pr.json
  done
  echo "== $cfg q4_k_m: long chunks"
  for P in 2048 3072 4096; do
    ab_bench $o p${P}_never $BS /tmp/m/m $P 128 3 $F=0
    ab_bench $o p${P}_c16 $BS /tmp/m/m $P 128 3 $F=1
    ab_bench $o p${P}_c8 $BS /tmp/m/m $P 128 3 $F=1 $C=8
    ab_bench $o p${P}_c32 $BS /tmp/m/m $P 128 3 $F=1 $C=32
  done
  ab_ids $o/ids-never.txt $BS /tmp/m/m $F=0
  ab_ids $o/ids-c8.txt $BS /tmp/m/m $F=1 $C=8
  cmp -s $o/ids-never.txt $o/ids-c8.txt && echo "  greedy ids: same" || echo "  greedy ids: DIFFER"
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w22.tar.xz w22
done
