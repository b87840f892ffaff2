#!/usr/bin/env bash
# R8 (session 33, tree 9dbecac): R7 again with HEAD_Q8X's output bound (binding 7): R7's in-kernel norm
# gave wrong logits on the H200 (the head read the int8 x before the kernel wrote it: nothing the host's barrier
# tracker saw ordered them) and its timing is void. (a) Logits (fold off, 1B) of the in-kernel norm against its own
# dispatch: predicted ~1e-7 rel L2, top-1 100%. (b) The 1B A/B, twice each: predicted -6 to -8 us a token (+0.6 to
# +1%). (c) The final table (run_peer.sh: llama.cpp's Vulkan backend in the same command, 512 + 128, medians of 5),
# with the in-kernel norm where (a) holds, else with BLUESHIFT_PERSISTENT_HEAD_NORM=0.
# Predicted: 1B q4_k_m ~1,290-1,300 tok/s (R5-R6: the int8 head 1,281), 8B q4_k_m ~352-353; f16 rows unchanged (their
# heads are F16); prefill and TTFT as session 32's R5.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/r8
line=$(benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m dispatch:BLUESHIFT_PERSISTENT_FOLD_O=0,BLUESHIFT_PERSISTENT_HEAD_NORM=0 \
  inkernel:BLUESHIFT_PERSISTENT_FOLD_O=0 | grep -v wrote)
echo "$line"
worst=$(echo "$line" | sed -E 's/.*worst rel L2 ([0-9.e+-]+).*/\1/')
if python3 -c "import sys; sys.exit(0 if float('$worst') < 1e-3 else 1)"; then echo "in-kernel norm: logits agree"
else echo "in-kernel norm: logits DIFFER, the table runs with BLUESHIFT_PERSISTENT_HEAD_NORM=0"; export BLUESHIFT_PERSISTENT_HEAD_NORM=0; fi
stamp logits
rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/m
$BS blueshift bench --model /tmp/m/m --prompt-tokens 64 --gen-tokens 32 --reps 1 --json > /tmp/r8/warm.json
for i in 1 2; do
  ab_bench /tmp/r8 llama-3.2-1b-dispatch$i $BS /tmp/m/m 512 128 5 BLUESHIFT_PERSISTENT_HEAD_NORM=0
  ab_bench /tmp/r8 llama-3.2-1b-inkernel$i $BS /tmp/m/m 512 128 5
done
stamp "1B A/B"
tar -C /tmp -cJf $OUT/r8.tar.xz r8
rm -rf /tmp/m
for cfg in llama-3.2-1b llama-3.1-8b; do
  timeout 240 bash benchmarks/peer/run_peer.sh --bundle /tmp/bs/bundle --llama .dev/peer/peer.tar.xz \
    --config benchmarks/configs/$cfg.json --quant q4_k_m,f16 --out /tmp/peer-out --work /tmp/bs-peer 2>&1 | tail -1
  stamp "$cfg peer"
  cp -r /tmp/peer-out /tmp/r8/
  tar -C /tmp -cJf $OUT/r8.tar.xz r8
done
cat /tmp/peer-out/peer.md
