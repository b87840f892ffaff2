#!/usr/bin/env bash
# V3: the sampler's first loads together (sample.comp: state[2], the host's cancel word, state[1] and the invocation's
# first argmax key issued at once; before, the cancel word was read only after state[2] came back, and the key only
# after the barrier that follows). $OLD = fd20eef's bundle (.dev/carry2/bundle-old.tar.xz), $BS = fd20eef + the change.
# Count: the sample dispatch takes 11.0 us a token on the 1B and 13.6 on the 8B (V2's rows), a chain of ~4-5 round
# trips (state, cancel word, keys, the embedding row) plus the dispatch's launch and drain; two of them go.
# Predicted: the sample dispatch -1 to -2 us (1B 11.0 -> 9-10 us): the 1B +0.15-0.3%, the 8B +0.05-0.1%.
# Carry .gl, .dev/carry, .dev/carry2.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/v3
sample_us() { python3 -c "import json,sys; print(f\"  {sys.argv[2]}: sample {json.load(open(sys.argv[1]))['gpu_ms_by_dispatch']['sample']*1000:.2f} us\")" "$1" "$2"; }
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/v3/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b c; do
    ab_bench $o new$r $BS /tmp/m/m 512 128 5 && sample_us $o/new$r.json new$r
    ab_bench $o old$r $OLD /tmp/m/m 512 128 5 && sample_us $o/old$r.json old$r
  done
  for v in new old; do r=$BS; [ $v = old ] && r=$OLD; ab_ids $o/ids-$v.txt $r /tmp/m/m; done
  cmp -s $o/ids-new.txt $o/ids-old.txt && echo "  greedy ids --deterministic: same" || echo "  greedy ids --deterministic: DIFFER"
  wc -w $o/ids-*.txt | head -2
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/v3.tar.xz v3
done
