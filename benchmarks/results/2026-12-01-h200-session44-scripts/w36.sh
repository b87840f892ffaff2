#!/usr/bin/env bash
# W36 (prepared in session 43, run in session 44): P4's first K steps a subgroup preloaded
# into shared memory in the wait of the grid barrier that opens it (decode_persistent.comp PRELOAD, default 0), against
# 0, 1B / 3B / 8B q4_k_m, 512 + 128, 5 reps, alternated three times; registers; then the phases at K = max.
# Count: the staging area's room past the norm's slots holds K = 2 steps of 20 subgroups x 32 lanes x 64 B on the 8B
# (5,409 of 6,049 uvec4s free, 2,560 a step), K = 1 on the 1B (3,137 free, 2,048 a step) and the 3B. A phase's DRAM
# traffic now starts only after the wait and the norm's staging (~2.6 us, W31), then each step waits a round trip
# (~1 us, PIPE 1). With the preload, K steps' traffic goes out in the wait and the staging, and the first K steps
# compute from shared memory.
# Predicted: 8B (K 2) P4 -1.5..-2.5 us a layer, +2..+3%; 1B (K 1) +1..+2%; 3B (K 1) +1..+1.5%; registers unchanged
# (the preloaded words die at their store, in the wait); logits identical (the same words, read later from shared
# memory).
# If it wins: the same for P1 (its first task from shared memory; where the Q6_K v layers' floats leave room), and a
# larger staging area on the 1B (its shared memory is half used) so that K = 2 fits there.
# Session 44, before the run: the K steps are loaded two at a time (one round trip for two: session 43's loop waited on
# each step's loads before issuing the next's), and PRELOAD_ROOM gives the steps shared memory past the staging area, so
# K is no longer clamped to 1-2: K = 4 fits every model here. Variants k0 / k2 / k4.
# Predicted (session 44): k2 as above; k4 on the 8B +3..+5% (21 MB in the wait and the staging, ~4.8 us of DRAM at
# peak against ~3.5 us of wait and staging: the last batch spills into the phase), the 1B and 3B +1.5..+3%.
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w36 $OUT
for cfg in llama-3.2-1b llama-3.2-3b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w36/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m: registers"
  bash benchmarks/kernel_registers.sh $BS /tmp/m/m k2:BLUESHIFT_PERSISTENT_PRELOAD=2 k4:BLUESHIFT_PERSISTENT_PRELOAD=4 \
    2>&1 | tee $o/regs.txt
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > /dev/null 2>&1
  BLUESHIFT_PERSISTENT_PRELOAD=8 $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 4 --reps 1 --json \
    2>/dev/null | python3 -c "import json,sys; print('preload taken at most:', json.load(sys.stdin)['decode_kernel'].get('preload'))"
  echo "== $cfg q4_k_m: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 3 k0: k2:BLUESHIFT_PERSISTENT_PRELOAD=2 k4:BLUESHIFT_PERSISTENT_PRELOAD=4
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w36.tar.xz w36
done
echo "== 8B phases at PRELOAD 4"
BLUESHIFT_PERSISTENT_PRELOAD=4 bash benchmarks/persistent_phases.sh $BS /tmp/m/m 64 | tee /tmp/w36/llama-3.1-8b/phases-k4.txt
tar -C /tmp -cJf $OUT/w36.tar.xz w36
