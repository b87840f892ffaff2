#!/usr/bin/env bash
# Session 22, G4 (tree 59a7851, decode_persistent_h16 the default): the f16 form's sums and parts, then the final
# table. Carry .gl and .dev/carry (bundle of 59a7851) and .dev/peer. ~7 minutes.
# 1. Logits over 200 decode positions on the 1B q4_k_m: the default (four f16 pair sums a nibble half) against the
#    float form and against the prefill path. G3 measured two sums (then the kernel's form): 8.2e-3 against float,
#    1.05e-2 against prefill (float: 6.55e-3). Predicted with four: ~7e-3 / ~9e-3 (lavapipe: 3.6e-3 -> 3.3e-3).
# 2. decode_ab.sh: sums2 (G3's form; predicted even: the extra conversions are on the FMA pipe, which is not the
#    binding one), float (G3: -2.8% 1B, -7.1% 8B), PARTS 3 and 1 (the f16 form holds 20 x registers a part against 34;
#    PARTS 3 lost with the float form). Registers of the f16 kernel at PARTS 2 and 3.
# 3. run_peer.sh on the 1B and 8B, q4_k_m and f16, llama.cpp's Vulkan backend in the same command.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o /tmp/peer-out
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/h --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/h /tmp/mq --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/h
toks=$(python3 -c "import random; random.seed(7); print(','.join(str(random.randrange(1000, 100000)) for _ in range(200)))")
$BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/pre.npy >/dev/null
for d in half float; do
  BLUESHIFT_Q4K_DOT=$d $BS blueshift logits --model /tmp/mq --tokens "$toks" --out /tmp/$d.npy --step >/dev/null
done
python3 benchmarks/logits_diff.py /tmp/float.npy /tmp/half.npy --label "half (4 sums) vs float decode"
python3 benchmarks/logits_diff.py /tmp/pre.npy /tmp/half.npy --label "half (4 sums) decode vs prefill"
python3 benchmarks/logits_diff.py /tmp/pre.npy /tmp/float.npy --label "float decode vs prefill"
for p in 2 3; do
  BLUESHIFT_PERSISTENT_PARTS=$p BLUESHIFT_PIPELINE_STATS=1 timeout 60 $BS blueshift bench --model /tmp/mq --prompt-tokens 16 \
    --gen-tokens 8 --reps 1 --json 2>&1 >/dev/null | grep "pipeline-stats decode_persistent" | cut -c1-110 | sed "s/^/PARTS $p: /"
done
rm -rf /tmp/mq
stamp logits
for s in 3.2-1b 3.1-8b; do
  timeout 170 benchmarks/decode_ab.sh $BS /tmp/o llama-$s q4_k_m sums2:BLUESHIFT_PERSISTENT_HALF_SUMS=2 \
    float:BLUESHIFT_Q4K_DOT=float p3:BLUESHIFT_PERSISTENT_PARTS=3 p1:BLUESHIFT_PERSISTENT_PARTS=1
  stamp $s
done
tar -C /tmp -cJf $OUT/g4.tar.xz o
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout $(( 590 - ($(date +%s) - t0) )) bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/o/; tar -C /tmp -cJf $OUT/g4.tar.xz o
done
cat /tmp/peer-out/peer.md
