#!/usr/bin/env bash
# Prepared in session 23 for the next session (not run: no device time left). ~5 minutes on the lease.
# next-i1.patch (applies to 0c87044 and later; passes test_persistent 16/16 on lavapipe; dropping its write-back of
# the scaled sx fails q4_k_m and q4_k_wide at rel L2 0.36 and 0.88): stage_norm builds the f16 / int8 slots in the
# same pass as the norm's scale (stage_quantize_scaled), one shared-memory pass and one workgroup barrier fewer in
# P1 and P4 of every layer. Note: with p.skip's bit 5 the slots are now skipped with the norm (persistent_phases.sh's
# "staging" then includes them, as it already did for the other stagings).
# Before the lease, on the development machine:
#   1. bundle this tree unpatched as the old side:
#        rm -rf /tmp/bundle && scripts/bundle.sh build /tmp/bundle && strip /tmp/bundle/bin/*
#        tar -C /tmp -cJf .dev/carry2/bundle-old.tar.xz bundle/bin/blueshift bundle/run
#   2. git apply benchmarks/results/2026-11-28-h200-session23-scripts/next-i1.patch, build, run test_persistent on
#      lavapipe, and bundle the patched tree as .dev/carry/bundle.tar.xz (the README's bundle line).
# Carry .gl, .dev/carry, .dev/carry2.
# Predicted: staging is 64 x 2.3 us on the 1B (H4) and ~0.43 ms on the 8B (H1); the pass and barrier saved are
# ~0.2-0.3 us of a P1 / P4 staging: 1B +1-2%, 8B +0.5-1.5%, the logits identical (the same products, rounded once).
# Also on the 1B: workgroups of 512 against 384 (BLUESHIFT_PERSISTENT_WG). 384 won on the H100 with the float form at
# PARTS 2 (889 against 854 tok/s, session 8); at PARTS 1 the f16 form holds fewer registers, and 512 turns gate/up's
# 8192 tasks into 4 rounds over 2112 subgroups instead of 6 over 1584.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1  # $OLD: the unpatched tree (.dev/carry2)
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
# The 1B's logits against the old tree's, over 200 decode positions at grid 132 (lavapipe runs a grid of 1): expect 0.
timeout 120 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m "old@$OLD:" new:
stamp logits
# decode_ab.sh: base (the patched tree) first and last, old and new alternating in two rounds.
for cfg in llama-3.2-1b llama-3.1-8b llama-3.2-3b; do
  extra=()
  [ $cfg = llama-3.2-1b ] && extra=("old-wg512@$OLD:BLUESHIFT_PERSISTENT_WG=512" new-wg512:BLUESHIFT_PERSISTENT_WG=512
                                    "old2-wg512@$OLD:BLUESHIFT_PERSISTENT_WG=512" new2-wg512:BLUESHIFT_PERSISTENT_WG=512)
  timeout 200 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m "old@$OLD:" new: "old2@$OLD:" new2: "${extra[@]}"
  stamp $cfg
  tar -C /tmp -cJf $OUT/i1.tar.xz o
done
