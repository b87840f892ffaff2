#!/usr/bin/env bash
# R5 (session 32, 28c2b20). (a) The shape settings again now that P5 is one pass a layer (1B: 8192 columns in one
# pass; 8B: Q4_K and Q6_K downs in one pass on the slots): 1B TEAM 1 (default 2), WG 384 / 640 (default 512); 8B TEAM 2
# (default 1), WG 512 (default 640). Predicted: none better by more than 0.5%.
# (b) The final table (run_peer.sh: llama.cpp's Vulkan backend in the same command, 512 + 128, medians of 5).
# Predicted: 1B q4_k_m ~1,230 tok/s, 8B q4_k_m ~347 (R2-R4); f16 rows, prefill and TTFT as session 31's R5.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r5
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  if [ $cfg = llama-3.2-1b ]; then sweep="TEAM=1 WG=384 WG=640"; else sweep="TEAM=2 WG=512"; fi
  benchmarks/kernel_registers.sh $BS /tmp/m/m $(for s in $sweep; do echo "$s:BLUESHIFT_PERSISTENT_$s"; done)
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r5/$cfg-warm.json
  for i in 1 2; do
    ab_bench /tmp/r5 $cfg-default$i $BS /tmp/m/m 512 128 5
    for s in $sweep; do ab_bench /tmp/r5 $cfg-$s-$i $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_$s; done
  done
  stamp $cfg
done
rm -rf /tmp/m
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 240 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/r5/
done
tar -C /tmp -cJf $OUT/r5.tar.xz r5
cat /tmp/peer-out/peer.md
