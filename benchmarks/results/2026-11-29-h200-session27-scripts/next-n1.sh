#!/usr/bin/env bash
# N1 (prepared for the next session; not run): can the kernel fit 768 wide without spilling? An experimental build:
# apply next-n1.patch (git apply), build, bundle; the variants are kernels of their own, picked by BLUESHIFT_PKX.
#   mw:   the attention merge's weights first (w_s = e^(m_s - M) / sum e^(m_s - M) l_s, one invocation a head, into
#         s_part behind a barrier); each element then holds its kMF partials' loads alone, not (m, l) beside them.
#   xs:   the h16 Q4_K math loads each slot half's x just before its two rows (M2: 8 registers of x held, not 16).
#   mwxs: both.
# Session 27 found the merge's loads setting the register peak: 768 (the driver's cap 80, 24 warps) spilled 160 bytes
# at base, 80 with one element an invocation (landed), 32 with e1att2; xs took 16 off base's. M3: e1att2 at 768,
# spilling 32 bytes, still gave the 8B +3.5% over 512. At 768 the 8B's gate/up takes 5 rounds (6 at 640) and its
# q/k/v 1 (2); the 1B's and 3B's gate/up 3 (4). 768 also shrinks the staging area (s_part takes 16 bytes an
# invocation): the 8B's down projection may stage in 3 passes, not 2.
# Predicted: mw at 768 spills 0-16 bytes; where it does not spill, the 8B +4-7% over 640 and the 1B and 3B +3-5% over
# 512; mw at the default widths -0.5-1% (session 21's F3 measured that barrier's cost on the 1B at 0.7%). Logits: mw
# reorders the merge's arithmetic (rounding-level moves, M3's att2: 4.9e-3 on the random 1B); xs likewise.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf /tmp/o; mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.2-1b.json q4_k_m /tmp/st
# pipe0: BLUESHIFT_PERSISTENT_PIPE=0 (dot2's Q4_K rows without the step-ahead buffers: 16 registers fewer held in the
# q/k/v, o and down phases; the gate/up stream keeps its own). At 768 the warps may make up for it (PIPE gave the 8B
# +0.8% at 16 warps, session 23's H2).
vs=()
for x in mw xs mwxs; do
  for w in 640 768; do vs+=("$x$w:BLUESHIFT_PKX=$x,BLUESHIFT_PERSISTENT_WG=$w"); done
  vs+=("${x}768p0:BLUESHIFT_PKX=$x,BLUESHIFT_PERSISTENT_WG=768,BLUESHIFT_PERSISTENT_PIPE=0")
done
benchmarks/kernel_registers.sh $BS /tmp/st/m base640:BLUESHIFT_PERSISTENT_WG=640 base768:BLUESHIFT_PERSISTENT_WG=768 \
  "${vs[@]}" | tee /tmp/o/stats.txt
stamp stats
BENCH_WORK=/tmp/lg timeout 100 benchmarks/logits_ab.sh $BS llama-3.2-1b q4_k_m base: mw:BLUESHIFT_PKX=mw \
  mwxs:BLUESHIFT_PKX=mwxs | tee /tmp/o/logits.txt
stamp logits
timeout 200 benchmarks/decode_ab.sh $BS /tmp/o llama-3.1-8b q4_k_m mw:BLUESHIFT_PKX=mw \
  mw768:BLUESHIFT_PKX=mw,BLUESHIFT_PERSISTENT_WG=768 mwxs768:BLUESHIFT_PKX=mwxs,BLUESHIFT_PERSISTENT_WG=768 \
  mwxs768p0:BLUESHIFT_PKX=mwxs,BLUESHIFT_PERSISTENT_WG=768,BLUESHIFT_PERSISTENT_PIPE=0
stamp 8b
tar -C /tmp -cJf $OUT/n1.tar.xz o
timeout 120 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-3b q4_k_m mw768:BLUESHIFT_PKX=mw,BLUESHIFT_PERSISTENT_WG=768 \
  mwxs768:BLUESHIFT_PKX=mwxs,BLUESHIFT_PERSISTENT_WG=768
stamp 3b
timeout 100 benchmarks/decode_ab.sh $BS /tmp/o llama-3.2-1b q4_k_m mw:BLUESHIFT_PKX=mw \
  mw768:BLUESHIFT_PKX=mw,BLUESHIFT_PERSISTENT_WG=768 mwxs768:BLUESHIFT_PKX=mwxs,BLUESHIFT_PERSISTENT_WG=768
stamp 1b
tar -C /tmp -cJf $OUT/n1.tar.xz o
