#!/usr/bin/env bash
# For session 26 (not run yet): PRIME (next-prime.patch, spec constant 14, off by default there): the q/k/v, o and down
# phases' first Q4_K words loaded between the arrival and the wait at the grid barrier that opens each (the down
# projection's later passes: before their staging), the overlap EARLY 2 gave the gate/up stream (K6: 1B +1.2%, 8B +0.9%).
# Apply the patch, build the bundle (.dev/carry), then run this with .gl and .dev/carry carried.
# Predicted: ~0.7 us a barrier: 1B +3% (3 barriers of 16 layers, 48 x 0.7 us of 0.74 ms), 8B +2% (96 x 0.7 us of 3.2 ms);
# logits identical to PRIME 0 (the same words, the same sums). PRIME 0 equal to 7b07a86 (the code compiles away).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
timeout 60 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m p0: p1:BLUESHIFT_PERSISTENT_PRIME=1
timeout 90 benchmarks/logits_ab.sh $BS llama-3.1-8b q4_k_m p0: p1:BLUESHIFT_PERSISTENT_PRIME=1
stamp logits
for cfg in llama-3.2-1b llama-3.1-8b qwen2.5-1.5b llama-3.2-3b; do
  timeout 150 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m p1:BLUESHIFT_PERSISTENT_PRIME=1 p1b:BLUESHIFT_PERSISTENT_PRIME=1
  stamp $cfg
  tar -C /tmp -cJf $OUT/next-prime.tar.xz o
done
