#!/usr/bin/env bash
# Session 7, final run A (main after merging i8dot): tests on the H100, HF parity of every family, serve's table.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
export BS_BINARY=/tmp/bs/bundle/bin/blueshift
t0=$(date +%s)
timeout 200 $BS test_coopmat > $OUT/test_coopmat.txt 2>&1; echo "test_coopmat rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_coopmat.txt | tr '\n' ' ')"
timeout 200 $BS test_kernels --gtest_filter='Matvec*' > $OUT/test_kernels.txt 2>&1; echo "test_kernels Matvec* rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_kernels.txt | tr '\n' ' ')"
timeout 200 $BS test_model --gtest_filter='Synth/Persistent.*' > $OUT/test_model.txt 2>&1; echo "test_model Persistent rc=$? $(grep -E '^\[  (PASSED|FAILED)  \]' $OUT/test_model.txt | tr '\n' ' ')"
grep -hE 'Failure|Which is|actual' $OUT/test_*.txt | head -6
echo "== parity $(( $(date +%s) - t0 )) s"
python3 $SHARED/tools/make_refs.py /tmp/refs llama-tiny,qwen3-tiny,gemma3-tiny > $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
python3 $SHARED/tools/make_refs_2026.py /tmp/refs gemma2-tiny,phi3-tiny,lfm2-tiny,qwen35-tiny >> $OUT/refs.txt 2>&1 || tail -3 $OUT/refs.txt
timeout 200 python3 benchmarks/parity_check.py "$BS" /tmp/refs 2>&1 | tee $OUT/parity.txt | tail -10
echo "== serve $(( $(date +%s) - t0 )) s"
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf --seed 1 >/dev/null 2>&1
$BS blueshift convert /tmp/hf /tmp/m1 --quant q4_k_m >/dev/null 2>&1; rm -rf /tmp/hf
$BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1
timeout 60 $BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json > $OUT/serve-1.json 2>/dev/null
for n in 4 8 16 32; do timeout 60 $BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json --parallel $n > $OUT/serve-$n.json 2>/dev/null; done
timeout 60 $BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 256 --reps 3 --json > $OUT/serve-1b.json 2>/dev/null
python3 - $OUT <<'PY'
import json, os, sys
o = sys.argv[1]
b = [json.load(open(os.path.join(o, f)))["decode_tok_s"] for f in ("serve-1.json", "serve-1b.json")]
base = sorted(b)[-1]
print("batch 1: %.1f / %.1f tok/s (the higher is the bar's base)" % tuple(b))
for n in (4, 8, 16, 32):
    try: d = json.load(open(os.path.join(o, f"serve-{n}.json")))
    except Exception: print(n, "failed"); continue
    print("N=%-2d %8.1f tok/s aggregate, %6.1f per stream, %.3f ms a step, %.2fx batch 1, %s dispatches / %s barriers a step" % (
        n, d["aggregate_decode_tok_s"], d["per_stream_decode_tok_s"], d["ms_per_step"], d["aggregate_decode_tok_s"] / base,
        d.get("dispatches_per_step"), d.get("barriers_per_step")))
PY
echo "all done $(( $(date +%s) - t0 )) s"
