#!/usr/bin/env bash
# Session 8, profile run: where the 512-token prefill goes now (bs_prefill_profile, by label, median of 3), 1B and
# 8B q4_k_m and 8B f16, for the next session's plan.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1q --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
$BS blueshift bench --model /tmp/m1q --prompt-tokens 512 --gen-tokens 4 --reps 1 >/dev/null 2>&1
timeout 90 $BS bs_prefill_profile /tmp/m1q --tokens 512 --reps 3 > $OUT/profile-1b-q4.txt 2>&1; head -30 $OUT/profile-1b-q4.txt
rm -rf /tmp/m1q
$BS blueshift synth --config benchmarks/configs/llama-3.1-8b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8q --quant q4_k_m >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m8f --quant f16 >/dev/null 2>&1; rm -rf /tmp/hf
echo "8B ready $(( $(date +%s) - t0 )) s"
for m in m8q m8f; do
  timeout 90 $BS bs_prefill_profile /tmp/$m --tokens 512 --reps 3 > $OUT/profile-8b-$m.txt 2>&1; head -30 $OUT/profile-8b-$m.txt
done
echo "all done $(( $(date +%s) - t0 )) s"
