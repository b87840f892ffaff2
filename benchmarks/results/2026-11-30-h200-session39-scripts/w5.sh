#!/usr/bin/env bash
# W5: TOUCH's cap. W4: at 2,048 + 128 more touches won (1B +5.4% at 2, +8.9% at 4; 8B +1.0% at 2, +6.4% at 4): the
# K and V rows outgrow a wait's reach (2 x lanes x 32 bytes: 1B 4 MB, 8B 5.1 MB) there. At 512 + 128 the touches stop
# at the rows' end, so a higher cap changes nothing there, except that W3 had the 8B best at 1 (372 against W4's 367
# at 2). Here: 512 + 128 at 0, 1, 2, 8, and 4,096 + 128 at 0, 4, 8, 16 (8B K and V 16.8 MB a layer there; 8 reaches
# 20.5 MB). Predicted: 512 + 128 even across 2 and 8; 4,096 + 128 best at 8 or 16. Then the peer table (run_peer.sh,
# llama.cpp's Vulkan backend in the same command, 3 rounds) with BLUESHIFT_PERSISTENT_TOUCH=8 in the environment.
# Carry .gl, .dev/carry and .dev/peer.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/w5
T="BLUESHIFT_PERSISTENT_TOUCH"
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w5/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  for r in a b; do
    for n in 0 1 2 8; do ab_bench $o touch${n}_$r $BS /tmp/m/m 512 128 5 $T=$n; done
  done
  for n in 0 4 8 16; do ab_bench $o long4k_touch${n} $BS /tmp/m/m 4096 128 3 $T=$n; done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w5.tar.xz w5
done
for cfg in llama-3.2-1b llama-3.1-8b; do
  BLUESHIFT_PERSISTENT_TOUCH=8 timeout 200 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle \
    --llama .dev/peer/peer.tar.xz --config benchmarks/configs/$cfg.json --quant q4_k_m --out /tmp/w5/peer-$cfg \
    --work /tmp/bs-peer --rounds 3 2>&1 | tail -3
  stamp "$cfg peer"
  cat /tmp/w5/peer-$cfg/peer.md
  tar -C /tmp -cJf $OUT/w5.tar.xz w5
done
