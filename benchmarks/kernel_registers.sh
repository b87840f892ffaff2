#!/usr/bin/env bash
# The persistent decode kernel's registers and spill under each setting, on one model (the driver's pipeline
# statistics, BLUESHIFT_PIPELINE_STATS=1; spill is its Local Memory Size less 2^36, which it reports for a kernel that
# does not spill):
#   benchmarks/kernel_registers.sh RUNNER MODEL [NAME:VAR=VAL,VAR=VAL ... | --phases]
# "base" (no settings) first, then each NAME (decode_ab.sh's syntax, without @RUNNER2); prints one line a setting:
#   NAME: registers R spill B
# --phases stands for the register attribution by phase (BLUESHIFT_PERSISTENT_STUB: a phase's code compiled out):
# each phase taken away alone (no_p1, no_att, no_o, no_gateup, no_down, no_staging), each kept alone with no staging
# (only_p1 ..), and none kept (skeleton). The environment reaches every run: BLUESHIFT_PERSISTENT_WG=512 in front shows
# what a 640-wide kernel (capped at 96 registers by the driver) would ask for.
set -euo pipefail
runner=$1; model=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ab_common.sh"
phases="p1:1 att:2 o:4 gateup:8 down:16"  # decode_persistent.comp's p.skip bits (STUB), the staging's 32 aside
settings=()
for a in "$@"; do
  if [[ $a == --phases ]]; then
    for b in $phases staging:32; do settings+=("no_${b%%:*}:BLUESHIFT_PERSISTENT_STUB=${b#*:}"); done
    for b in $phases; do settings+=("only_${b%%:*}:BLUESHIFT_PERSISTENT_STUB=$(( 63 & ~${b#*:} ))"); done
    settings+=("skeleton:BLUESHIFT_PERSISTENT_STUB=63")
  else
    settings+=("$a")
  fi
done
for v in base: "${settings[@]}"; do
  ab_variant "$runner" "$v"
  line=$(env "${ab_env[@]}" BLUESHIFT_PIPELINE_STATS=1 "$runner" blueshift bench --model "$model" --prompt-tokens 16 \
    --gen-tokens 4 --reps 1 --json 2>&1 >/dev/null | grep "decode_persistent" | head -1 || true)
  if [[ $line =~ Register\ Count=([0-9]+).*Local\ Memory\ Size=([0-9]+) ]]; then
    echo "$ab_name: registers ${BASH_REMATCH[1]} spill $(( BASH_REMATCH[2] - 68719476736 ))"
  else
    echo "$ab_name: no decode_persistent statistics (is the persistent kernel taken?)"
  fi
done
