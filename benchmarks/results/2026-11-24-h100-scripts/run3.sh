#!/usr/bin/env bash
# Session 2026-11-24, device run 3: Gemma 2 and Phi-3 (new this session) and the padded-row Gemma 3
# golden (hidden 320) at HF parity on the H100, prefill and decode paths plus greedy ids; then the model
# tests (shared tiny models through HF dir and RDRR, synthesized feature cases, the DOPPLER-style bundle).
set -uo pipefail
. benchmarks/lease_setup.sh
L=$OUT/run3.txt
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
export BS_SHARED_DIR=$SHARED BS_BINARY=/tmp/bs/bundle/bin/blueshift BS_SOURCE_DIR=$PWD
timeout 150 python3 benchmarks/parity_check.py $BS $SHARED/data/models gemma2-tiny phi3-tiny 2>&1
timeout 60 python3 benchmarks/parity_check.py $BS tests/model/goldens gemma3-pad320 2>&1
$BS test_model --gtest_brief=1 2>&1 | tail -5
$BS test_kernels --gtest_brief=1 2>&1 | tail -3
} 2>&1 | tee $L
