#!/usr/bin/env bash
# P9 (session 29): the 64-weight Q6_K matvec (5c85788) in the per-phase decode path, which P2 did not time: Gemma 3 1B
# (sandwich norms: the persistent kernel does not take it) and the 8B with BLUESHIFT_NO_PERSISTENT=1 (Q6_K attn_v and
# ffn_down in half its layers, and the head). $OLD is this tree with 3aa4de4's matvec_q6k.comp (32-weight parts),
# given the old head default (BLUESHIFT_HEAD_ROWS=2).
# Predicted: from P1's isolated layer shapes (-6 to -7% on 4096 x 14336 and 14336 x 4096) and the head, +0.3 to +1% on
# both; never a loss beyond noise.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
timeout 90 benchmarks/decode_ab.sh $BS /tmp/o gemma-3-1b q4_k_m old@$OLD:BLUESHIFT_HEAD_ROWS=2
stamp gemma
tar -C /tmp -cJf $OUT/p9.tar.xz o
timeout 190 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m np:BLUESHIFT_NO_PERSISTENT=1 \
  npold@$OLD:BLUESHIFT_NO_PERSISTENT=1,BLUESHIFT_HEAD_ROWS=2
stamp 8b
tar -C /tmp -cJf $OUT/p9.tar.xz o
