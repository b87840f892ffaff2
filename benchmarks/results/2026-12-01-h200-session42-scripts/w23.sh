#!/usr/bin/env bash
# W23 (session 42): greedy's sampler folded into the head (matvec.glsl MV_SAMPLE; BLUESHIFT_HEAD_SAMPLE=0 keeps the
# sample dispatch). W22: the sample dispatch is 11.8 us a token on the 1B q4_k_m (13.1-13.6 on the 8B), of which 7.2
# (7.4-7.7) is left with its keys, row and cancel word taken out: the dispatch and its bookkeeping.
# Predicted: the head +3..5 us (the last workgroup's chain: keys, state, the row), the sample dispatch gone:
# 1B q4_k_m -6..-9 us a token (+0.8..1.2%), 8B q4_k_m +0.2..0.35%, 1B f16 (per-phase) +0.6..0.9%. Greedy ids the same.
# Carry .gl, .dev/carry (a bundle of the tree; check $BS_BUILD).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w23 $OUT
H=BLUESHIFT_HEAD_SAMPLE
row() {  # NAME JSON: decode tok/s, the kernel's, the head's and the sampler's ms
  python3 - "$2" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpu_ms_by_dispatch"]
k = next((v for n, v in g.items() if n.startswith("decode_persistent")), 0)
h = next((v for n, v in g.items() if n.startswith("matvec") and "128256" in n), 0)
print(f"{sys.argv[2]:16s} {d['decode_tok_s']:8.1f} tok/s  kernel {k*1e3:7.1f} us  head {h*1e3:6.1f} us  sample {g.get('sample', 0)*1e3:5.2f} us  dispatches {d['dispatches_per_token']}")
PY
}
for spec in llama-3.2-1b:q4_k_m llama-3.1-8b:q4_k_m llama-3.2-1b:f16; do
  cfg=${spec%%:*} q=${spec#*:}
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json $q /tmp/m
  o=/tmp/w23/$cfg-$q; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  echo "== $cfg $q: 512 + 128, 5 reps"
  for v in 1 0 1 0 1 0; do
    n=fold$v-$RANDOM
    env $H=$v timeout 60 $BS blueshift bench --model /tmp/m/m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json \
      > $o/$n.json 2>/dev/null && row $n $o/$n.json
  done
  ab_ids $o/ids-1.txt $BS /tmp/m/m $H=1
  ab_ids $o/ids-0.txt $BS /tmp/m/m $H=0
  cmp -s $o/ids-1.txt $o/ids-0.txt && echo "  greedy ids: same ($(wc -w < $o/ids-1.txt))" || echo "  greedy ids: DIFFER"
  # Greedy without --deterministic (the fold_o kernel) and an EOS-free 200-token run, both ways.
  for v in 1 0; do env $H=$v $BS blueshift generate --model /tmp/m/m --prompt-tokens 1,5,77,1000 --max-tokens 200 \
    --ignore-eos --temperature 0 --json 2>/dev/null | python3 -c "import json,sys; print(' '.join(str(json.loads(l)['id']) for l in sys.stdin if l.startswith('{')))" > $o/long-$v.txt; done
  cmp -s $o/long-1.txt $o/long-0.txt && echo "  200 greedy ids (no --deterministic): same" || echo "  200 greedy ids: DIFFER (fold_o's atomics differ run to run)"
  stamp "$cfg $q done"
  tar -C /tmp -cJf $OUT/w23.tar.xz w23
done
