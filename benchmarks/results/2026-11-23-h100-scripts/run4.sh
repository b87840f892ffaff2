#!/usr/bin/env bash
# Session 4, device run 4: L2 prefetch beside decode attention, A/B over the budget (1B, 8B).
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run4.txt
{
echo "== decode A/B 1B"; timeout 240 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.2-1b q4_k_m pf8:BLUESHIFT_PREFETCH_MB=8 pf24:BLUESHIFT_PREFETCH_MB=24 pf40:BLUESHIFT_PREFETCH_MB=40 2>&1
echo "== decode A/B 8B"; timeout 240 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.1-8b q4_k_m pf24:BLUESHIFT_PREFETCH_MB=24 pf40:BLUESHIFT_PREFETCH_MB=40 2>&1
} 2>&1 | tee $L
