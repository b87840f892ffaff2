#!/usr/bin/env bash
# Prepared in session 17 for the next session (not run: no device time left). What in a Q4_K task of the persistent
# decode kernel costs the time? benchmarks/persistent_phases.sh now ends with BLUESHIFT_PERSISTENT_PROBE's bits, one at a
# time (decode_persistent.comp PROBE: 1 no Q4_K header loads, 2 no x from the staging area, 4 no subgroup reductions,
# 8 no Q4_K code loads; timing only, wrong logits). ~2 minutes. Carry .gl, .dev/carry (a bundle of this tree).
# Counted for the 1B's gate/up phase (15.7 us a layer on the H200 for 18.9 MB): ALU ~4 us, shared-memory x reads ~2.3 us,
# the end-of-task reductions ~1 us a subgroup, DRAM at 4.4 TB/s ~4.3 us. Predicted, if the phase is bound by its DRAM
# stream: bit 8 takes more than half the step's matvec time away and bits 1, 2 and 4 under 10% each; if it is bound by
# issue, bits 1 and 2 each take more than their count (header decode ~15% of the ALU, x reads ~15%) and bit 8 little.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
for cfg in llama-3.2-1b llama-3.1-8b; do
  $BS blueshift synth --config benchmarks/configs/$cfg.json /tmp/h --seed 1 >/dev/null 2>&1
  $BS blueshift convert /tmp/h /tmp/m --quant q4_k_m --force >/dev/null 2>&1; rm -rf /tmp/h
  stamp "$cfg"
  timeout 200 bash benchmarks/persistent_phases.sh $BS /tmp/m 64
  rm -rf /tmp/m
done
stamp done
