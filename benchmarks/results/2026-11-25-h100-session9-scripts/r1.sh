#!/usr/bin/env bash
# Session 9, review run: attention_fa with the shared bs_window_lo (common.glsl): the attention tests on the H100.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
timeout 150 $BS test_gpu --gtest_filter='*Attention*' 2>&1 | grep -E "OK|FAIL|PASSED|Failure|nmse|Expected|SKIP" | head -20
