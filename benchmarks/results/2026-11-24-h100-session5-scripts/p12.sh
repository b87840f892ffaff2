#!/usr/bin/env bash
# P12: main after merging the batch branch: kernel tests (slots), HF parity, batch-1 bench of the 1B, then
# benchmarks/serve_multi.sh (serve's batched decode, issue 17).
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
$BS test_gpu 2>&1 | grep -E "PASSED|FAILED" | head -5
python3 $SHARED/tools/make_refs.py /tmp/refs llama-tiny,qwen3-tiny > $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
python3 $SHARED/tools/make_refs_2026.py /tmp/refs gemma2-tiny,qwen35-tiny >> $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
timeout 150 python3 benchmarks/parity_check.py "$BS" /tmp/refs 2>&1 | tee $OUT/parity.txt
mkdir -p $OUT/sm; OUT=$OUT/sm timeout 420 bash benchmarks/serve_multi.sh 2>&1 | tail -45
(cd $OUT && tar -cJf sm.tar.xz sm && rm -rf sm)
