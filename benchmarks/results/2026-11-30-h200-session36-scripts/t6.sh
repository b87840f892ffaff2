#!/usr/bin/env bash
# T6 (session 36): the persistent kernel's settings again under POLL_COUNT (cheaper barriers may move what was best):
# EARLY 0 / 1 against 2, the 1B at TEAM 1 and at 384 wide, the 8B at 512 wide. b8da5bd's bundle, env only.
# Predicted: every default holds, within 1%. Carry .gl, .dev/carry.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t6
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t6/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  if [ $cfg = llama-3.2-1b ]; then extra=(team1:BLUESHIFT_PERSISTENT_TEAM=1 wg384:BLUESHIFT_PERSISTENT_WG=384);
  else extra=(wg512:BLUESHIFT_PERSISTENT_WG=512); fi
  for r in a b; do
    ab_bench $o base$r $BS /tmp/m/m 512 128 5
    for v in early0:BLUESHIFT_PERSISTENT_EARLY=0 early1:BLUESHIFT_PERSISTENT_EARLY=1 "${extra[@]}"; do
      ab_bench $o ${v%%:*}$r $BS /tmp/m/m 512 128 5 ${v#*:}
    done
  done
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t6.tar.xz t6
done
