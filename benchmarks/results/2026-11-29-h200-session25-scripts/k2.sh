#!/usr/bin/env bash
# K2: is the persistent kernel's Q4_K streaming bound by the bytes a subgroup has in flight? The matvecs' loads alone
# (SKIP bit 6, no math: wrong logits) at PARTS 1, 2, 3 with PIPE (1, 2, 3 steps' words in flight a lane, next to the
# ones in use), and the full kernel at PARTS 2 with PIPE, on the 1B and the 8B (tree = k1's new, STREAM on).
# Predicted: if in-flight bytes bind, loads-only falls by ~30% from PARTS 1 to 2 on the 8B; if not, under 5%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
for cfg in llama-3.1-8b llama-3.2-1b; do
  timeout 200 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m lo1:BLUESHIFT_PERSISTENT_SKIP=64 \
    lo2:BLUESHIFT_PERSISTENT_SKIP=64,BLUESHIFT_PERSISTENT_PARTS=2,BLUESHIFT_PERSISTENT_PIPE=1 \
    lo3:BLUESHIFT_PERSISTENT_SKIP=64,BLUESHIFT_PERSISTENT_PARTS=3,BLUESHIFT_PERSISTENT_PIPE=1 \
    p2:BLUESHIFT_PERSISTENT_PARTS=2,BLUESHIFT_PERSISTENT_PIPE=1 \
    lo1-384:BLUESHIFT_PERSISTENT_SKIP=64,BLUESHIFT_PERSISTENT_WG=384
  stamp $cfg
  tar -C /tmp -cJf $OUT/k2.tar.xz o
done
