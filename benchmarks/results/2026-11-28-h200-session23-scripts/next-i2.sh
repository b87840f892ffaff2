#!/usr/bin/env bash
# Prepared in session 23 for the next session (not run: no device time left). ~6 minutes on the lease.
# next-i2.patch (applies to 1ec303c and later, with or without next-i1.patch; test_persistent 19/19 on lavapipe with its
# three new cases; summing member 0's partial alone fails all three at rel L2 1.5-1.8): add_matvec's tasks (the o and
# down projections) go to teams of TEAM subgroups of one workgroup, each member a contiguous run of the columns'
# 256-blocks, member 0 adding the partials in a fixed order (s_part, two halves, one workgroup barrier a round). dot2
# takes the staging origin kx apart from the columns' start k0. TEAM is 1 unless BLUESHIFT_PERSISTENT_TEAM=N (N must
# divide the workgroup's subgroups: 12 on the 1B, 16 on the 3B and 8B).
# Before the lease: bundle this tree unpatched as .dev/carry2 (next-i1.sh's step 1), apply next-i2.patch, build, run
# test_persistent on lavapipe, bundle as .dev/carry. Carry .gl, .dev/carry, .dev/carry2.
# Predicted (step counts, ~1 us a step):
#   TEAM 1 against the old tree: 0 (the grid-stride loop as a counted one; the same sums, logits identical).
#   1B TEAM 3: the down projection's 1024 tasks as 2 rounds of 3 steps on 528 teams instead of 1 round of 8: +2-3%.
#   1B TEAM 4: 3 rounds of 2 steps: +2-3%. TEAM 2: 2 rounds of 4: 0.
#   3B TEAM 4: down 1536 tasks, 3 rounds of 2 steps against 1 of 8: +1-2%. 8B: nothing to gain (2048 tasks on 2112
#   subgroups); TEAM 2 there should lose a little (2 rounds of 4 steps a pass against 1 of 7).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1  # $OLD: the unpatched tree (.dev/carry2)
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/o
# The 1B's logits against the old tree's, over 200 decode positions at grid 132 (lavapipe runs a grid of 1): TEAM 1 expect 0; TEAM 3 splits the down sums in 3.
timeout 150 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m "old@$OLD:" new: team3:BLUESHIFT_PERSISTENT_TEAM=3
stamp logits
# decode_ab.sh: base (the patched tree at TEAM 1) first and last; the old tree and each TEAM in two rounds.
for cfg in llama-3.2-1b llama-3.2-3b llama-3.1-8b; do
  case $cfg in llama-3.2-1b) teams="2 3 4";; *) teams="2 4";; esac
  variants=()
  for i in 1 2; do
    variants+=("old$i@$OLD:")
    for n in $teams; do variants+=("team$n-$i:BLUESHIFT_PERSISTENT_TEAM=$n"); done
  done
  timeout 240 benchmarks/decode_ab.sh $BS /tmp/o $cfg q4_k_m "${variants[@]}"
  stamp $cfg
  tar -C /tmp -cJf $OUT/i2.tar.xz o
done
