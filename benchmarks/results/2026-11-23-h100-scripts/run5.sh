#!/usr/bin/env bash
# Session 4, device run 5: rows per matvec workgroup, plain and gated (1B, 8B).
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run5.txt
{
echo "== decode A/B 1B"; timeout 240 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.2-1b q4_k_m g1:BLUESHIFT_GATED_ROWS=1 g2:BLUESHIFT_GATED_ROWS=2 g8:BLUESHIFT_GATED_ROWS=8 r2:BLUESHIFT_MATVEC_ROWS=2 r8:BLUESHIFT_MATVEC_ROWS=8 2>&1
echo "== decode A/B 8B"; timeout 240 benchmarks/decode_ab.sh $BS /tmp/ab llama-3.1-8b q4_k_m g2:BLUESHIFT_GATED_ROWS=2 r2:BLUESHIFT_MATVEC_ROWS=2 r8:BLUESHIFT_MATVEC_ROWS=8 2>&1
} 2>&1 | tee $L
