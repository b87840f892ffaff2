#!/usr/bin/env bash
# H2: Q4_K rows loading a step ahead of their math (PIPE, spec constant 10) against PIPE=0, at PARTS 1 and 2,
# on the 1B, 8B and 3B q4_k_m, two rounds; the logits of PIPE 1 against 0 (the same arithmetic: expect 0);
# then persistent_phases.sh on the 8B with the default kernel.
# Predicted: the step's math stops running between a subgroup's loads on all but the last step of a task
# (8B: 3 of 4 steps at k = 4096; 1B: 1 of 2 at k = 2048): 8B +8-15%, 3B +6-10%, 1B +3-6%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
row() { local tag=$1 m=$2; shift 2
  env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /dev/null
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d['gpu_ms_by_kernel'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% of {d[\"peak_gb_s\"]:.0f} GB/s  kernel ' + ' '.join(f'{n} {v:.3f}' for n, v in k.items() if n.startswith('decode_persistent')))" 2>&1 | tail -1; }
for s in 3.2-1b 3.1-8b 3.2-3b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
  $BS blueshift bench --model /tmp/mq --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null  # clocks up
  if [ $s = 3.2-1b ]; then
    toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(200)))")
    $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/new.npy --step >/dev/null
    BLUESHIFT_PERSISTENT_PIPE=0 $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/old.npy --step >/dev/null
    python3 benchmarks/logits_diff.py /tmp/old.npy /tmp/new.npy --label "PIPE 1 vs 0"
  fi
  for i in 1 2; do
    for parts in 2 1; do
      row $s-pipe0-p$parts-$i /tmp/mq BLUESHIFT_PERSISTENT_PIPE=0 BLUESHIFT_PERSISTENT_PARTS=$parts
      row $s-pipe1-p$parts-$i /tmp/mq BLUESHIFT_PERSISTENT_PIPE=1 BLUESHIFT_PERSISTENT_PARTS=$parts
    done
  done
  if [ $s = 3.1-8b ]; then timeout 150 benchmarks/persistent_phases.sh $BS /tmp/mq 32; fi
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/h2.tar.xz o
done
