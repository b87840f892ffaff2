#!/usr/bin/env bash
# s12.sh and s14.sh are session 16's, unchanged: benchmarks/results/2026-11-28-h200-session16-scripts/.
# Session 17 R1: s12 (occupancy probe) then s14 (cached vs write-combined staging at 8 threads).
set -uo pipefail
cd "$(dirname "$0")/../.."
bash .dev/s17/s12.sh 2>&1 | tail -30
bash .dev/s17/s14.sh 2>&1 | tail -60
