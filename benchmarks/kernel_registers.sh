#!/usr/bin/env bash
# The persistent decode kernel's registers and spill under each setting, on one model (the driver's pipeline
# statistics, BLUESHIFT_PIPELINE_STATS=1; spill is its Local Memory Size less 2^36, which it reports for a kernel that
# does not spill):
#   benchmarks/kernel_registers.sh RUNNER MODEL [NAME:VAR=VAL,VAR=VAL ...]
# "base" (no settings) first, then each NAME (decode_ab.sh's syntax, without @RUNNER2); prints one line a setting:
#   NAME: registers R spill B
set -euo pipefail
runner=$1; model=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ab_common.sh"
for v in base: "$@"; do
  ab_variant "$runner" "$v"
  line=$(env "${ab_env[@]}" BLUESHIFT_PIPELINE_STATS=1 "$runner" blueshift bench --model "$model" --prompt-tokens 16 \
    --gen-tokens 4 --reps 1 --json 2>&1 >/dev/null | grep "decode_persistent" | head -1 || true)
  if [[ $line =~ Register\ Count=([0-9]+).*Local\ Memory\ Size=([0-9]+) ]]; then
    echo "$ab_name: registers ${BASH_REMATCH[1]} spill $(( BASH_REMATCH[2] - 68719476736 ))"
  else
    echo "$ab_name: no decode_persistent statistics (is the persistent kernel taken?)"
  fi
done
