#!/usr/bin/env bash
# W38 (session 44): AHEAD = D, P4's stream steps 1 .. D touched into the caches in the wait of the grid barrier that
# opens it (one word a 32-byte sector, rows a and b, 18 sectors a row a step), the words folded only after the norm's
# staging, against 0; 1B / 8B q4_k_m, 512 + 128, 5 reps, alternated twice; registers.
# Why: W36 found PRELOAD never taken on the H200. NVIDIA's Vulkan driver gives a workgroup 48 KB of shared memory
# (maxComputeSharedMemorySize 49,152): the staging area is 5,288 floats on the 8B and 5,532 on the 1B, and a step of
# every subgroup (40 KB on the 8B) does not fit beside anything. The touches need no shared memory: 2 registers a step.
# Session 39's W2 touched the streamed phases' weights in the wait and lost (1B -2%, 8B even), with the touched words
# folded before the wait's workgroup barrier: "the touches' round trip held the last workgroup to arrive". Here no
# instruction waits on them until after the staging, and EARLY's loads (issued the same way) win.
# Count (8B): a step of the grid is 2,640 subgroups x 2 x 576 B = 3.0 MB; P4 is 14 steps (42 MB... 66 MB with tails),
# ~25.7 us a layer (W26). The wait and the staging are ~3 us, in which DRAM could move ~13 MB: ~4 steps. D = 2 moves
# 6 MB of the phase's first rounds into that window.
# Predicted: 8B D2 +1..+3%, D4 about the same or better (if the window holds it); 1B (2 steps a task) D2 +0.5..+2%;
# registers: +0..+4 on the 8B (95 now, the cap 96: a spill would show here), the 1B unchanged; ids the same (the
# touches change no value).
# Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
echo "bundle: $BS_BUILD"
mkdir -p /tmp/w38 $OUT
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/w38/$cfg; mkdir -p $o
  echo "== $cfg q4_k_m: registers"
  bash benchmarks/kernel_registers.sh $BS /tmp/m/m a1:BLUESHIFT_PERSISTENT_AHEAD=1 a2:BLUESHIFT_PERSISTENT_AHEAD=2 \
    a4:BLUESHIFT_PERSISTENT_AHEAD=4 2>&1 | tee $o/regs.txt
  BLUESHIFT_PERSISTENT_AHEAD=2 $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 4 --reps 1 --json \
    2>/dev/null | python3 -c "import json,sys; print('ahead taken:', json.load(sys.stdin)['decode_kernel'].get('ahead'))"
  echo "== $cfg q4_k_m: 512 + 128, 5 reps"
  ab_rounds $o $BS /tmp/m/m 512 128 5 2 a0: a1:BLUESHIFT_PERSISTENT_AHEAD=1 a2:BLUESHIFT_PERSISTENT_AHEAD=2 \
    a4:BLUESHIFT_PERSISTENT_AHEAD=4
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/w38.tar.xz w38
done
