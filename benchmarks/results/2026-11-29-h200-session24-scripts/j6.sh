#!/usr/bin/env bash
# J6: qwen2.5-1.5b at 448 wide with TEAM 2 (14 subgroups: 924 teams for its 768 o/down tasks, one round; gate/up's
# 8,960 tasks in 5 rounds on 1,848 subgroups instead of 6 on 1,584) against its default, 384 wide TEAM 2. Tree a46fca7.
# Predicted from J5's count: +2-4% if a round at 448 costs what one at 384 does, less if it costs like 512.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
timeout 150 benchmarks/decode_ab.sh $BS /tmp/o qwen2.5-1.5b q4_k_m wg448-1:BLUESHIFT_PERSISTENT_WG=448 wg448-2:BLUESHIFT_PERSISTENT_WG=448
