#!/usr/bin/env bash
# H4: the Q4_K forms at PARTS 1 with PIPE 1 (the f16 form's new defaults) against the f16 default, on the 1B and 8B
# q4_k_m, two rounds; then persistent_phases.sh on the 1B with the default kernel (where its time goes).
# Predicted: the int form's dot is ~4x fewer instructions a weight than the f16 form's; H3's breakdown says the math
# now costs more than the codes' loads (+0.67 ms against +0.14 on the 8B). If the math's issue is the bound, the int
# forms should now gain: int +3-8% on the 8B. G3 (PARTS 2, no PIPE) had int at -4.5% (1B) / -2.2% (8B) against float.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
row() { local tag=$1 m=$2; shift 2
  env "$@" timeout 60 $BS blueshift bench --model $m --prompt-tokens 512 --gen-tokens 128 --reps 5 --json > /tmp/o/$tag.json 2> /dev/null
  python3 -c "import json;d=json.load(open('/tmp/o/$tag.json'));k=d['gpu_ms_by_kernel'];print(f'$tag: decode {d[\"decode_tok_s\"]:.1f} tok/s  {d[\"pct_of_peak\"]:.1f}% of {d[\"peak_gb_s\"]:.0f} GB/s  kernel ' + ' '.join(f'{n} {v:.3f}' for n, v in k.items() if n.startswith('decode_persistent')))" 2>&1 | tail -1; }
P1="BLUESHIFT_PERSISTENT_PARTS=1 BLUESHIFT_PERSISTENT_PIPE=1"
for s in 3.2-1b 3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/llama-$s.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
  $BS blueshift bench --model /tmp/mq --prompt-tokens 64 --gen-tokens 32 --reps 1 --json >/dev/null  # clocks up
  for i in 1 2; do
    row $s-half-$i /tmp/mq
    for f in int intmx float; do row $s-$f-p1pipe-$i /tmp/mq BLUESHIFT_Q4K_DOT=$f $P1; done
    row $s-int-default-$i /tmp/mq BLUESHIFT_Q4K_DOT=int
  done
  if [ $s = 3.2-1b ]; then timeout 150 benchmarks/persistent_phases.sh $BS /tmp/mq 64; fi
  rm -rf /tmp/mq
  stamp $s
  tar -C /tmp -cJf $OUT/h4.tar.xz o
done
