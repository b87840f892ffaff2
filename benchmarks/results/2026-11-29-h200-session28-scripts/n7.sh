#!/usr/bin/env bash
# N7: N6's last step again (run_peer had removed its models): where the 8B q4_k_m kernel's time goes at 640 wide.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
rm -rf /tmp/o; mkdir -p /tmp/o
. benchmarks/ab_common.sh
ab_model $BS benchmarks/configs/llama-3.1-8b.json q4_k_m /tmp/s8
timeout 200 benchmarks/persistent_phases.sh $BS /tmp/s8/m 32 | tee /tmp/o/phases-8b.txt
tar -C /tmp -cJf $OUT/n7.tar.xz o
