#!/usr/bin/env bash
# H100, issue 17's bar (serve's batched decode at N = 16 >= 6x batch 1) with the tensor-core kernel for the
# batched step's products (matmul_rows_cm: 16 rows of W a workgroup, k split over its subgroups, X in f16; the
# default up to 32 sequences where the device has cooperative matrices), on a Llama-3.2-1B-shaped q4_k_m
# (synth, then convert):
#   1. correctness: test_coopmat's rows-kernel tests (float64 references; the emulated kernel beside them) and
#      matmul_cm's (weight_chunk.glsl changed under it); where the bundle has test_serve (and curl is there),
#      serve's parallel suite through BLUESHIFT_BATCH_GEMM=rowscm on its tiny model (its text tests compare
#      with generate's f32 decode: f16 X and W can part them at a sampling near-tie after many equal tokens,
#      which is not a kernel error; the kernel tests are the check);
#   2. the kernels alone at N = 4, 16, 32 (bs_gemv_bench --multi): rowscm at 2, 4, 6, 8 subgroups (gated at
#      2, 4, 6), at k steps of 64 and 128 (rowscm_k128), beside the multi-row matvec (ROWS 2), on the step's
#      shapes (q4k: 2048x2048, 512x2048,
#      8192x2048 plain and gated, 2048x8192, 128256x2048; q6k: 512x2048, 2048x8192, 128256x2048);
#   3. bench --parallel N at N = 4, 8, 16, 32, rowscm (BLUESHIFT_BATCH_GEMM=rowscm: the default from 8 rows) and
#      BLUESHIFT_BATCH_GEMM=multi (the default below), one step of each profiled by kernel at N = 16; batch 1; at
#      N = 16 the subgroups
#      and the k step swept (BLUESHIFT_ROWSCM_SG / _GATED_SG / _BK).
# Prompts of 128 random tokens, 256 generated, medians of 3 (multi and the sweep: 2, 128 generated for the
# sweep). About 4 to 5 minutes of device time; compact tables last.
#   benchmarks/serve_rowscm.sh      (carry .gl .dev/carry: a bundle with test_coopmat, test_serve; writes $OUT)
#
# Prediction (benchmarks/results/2026-11-24-rowscm-plan.md, before the code): N = 16 ~2.2 ms a step (1.6-3.2),
#   ~7,300 tok/s, ~8.8x batch 1; profiled ~2.5 ms, the rows_cm kernels ~1.1 ms of it (q | k | v ~6 us a
#   layer, o ~5, gated FFN ~12, down ~7, head ~90 us); ~190 dispatches and ~150 barriers a step.
set -uo pipefail
. benchmarks/serve_common.sh
bin=$(dirname "$BS")/bin
if [ -x "$bin/test_coopmat" ]; then
  timeout 150 $BS test_coopmat --gtest_filter='MatmulRows*:RowsCm*:MatmulCm*' > "$OUT/test_coopmat.txt" 2>&1
  echo "test_coopmat (rows kernels, emulation, matmul_cm): rc=$? $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]' "$OUT/test_coopmat.txt" | tr '\n' ' ')" \
    "skipped: $(grep -cE '^\[  SKIPPED \] .*\(' "$OUT/test_coopmat.txt")"
  grep -E "Failure|actual:" "$OUT/test_coopmat.txt" | head -6
else
  echo "test_coopmat: not in the bundle"
fi
if [ -x "$bin/test_serve" ] && command -v curl >/dev/null; then
  BS_BINARY=$bin/blueshift timeout 120 $BS test_serve --gtest_filter='Parallel/ServeP.*/parallel4rowscm:-*LoadTest*' \
    > "$OUT/test_serve.txt" 2>&1
  echo "test_serve (parallel 4 through rowscm): rc=$? $(grep -E '^\[  (PASSED|FAILED)  \] [0-9]' "$OUT/test_serve.txt" | tr '\n' ' ')"
  grep -E "Failure|Expected|Which is" "$OUT/test_serve.txt" | head -6
else
  echo "test_serve: not in the bundle (or no curl)"
fi
echo "tests done $(( $(date +%s) - t0 )) s"

serve_model

for n in 4 16 32; do
  for spec in "q4k 2048x2048,512x2048,8192x2048,2048x8192,128256x2048" "q6k 512x2048,2048x8192,128256x2048"; do
    read -r dt shapes <<< "$spec"
    timeout 100 $BS bs_gemv_bench --multi $n --only rowscm,rowscm_k128,rowscm_r32,rowscm_gated,multi --dtype $dt --shape $shapes \
      --wg 64,128,192,256 --rows 2 --reps 10 --json > "$OUT/gemv-$n-$dt.json" 2> "$OUT/gemv-$n-$dt.err" \
      || { echo "bs_gemv_bench --multi $n $dt failed"; tail -3 "$OUT/gemv-$n-$dt.err"; }
  done
done
echo "kernels done $(( $(date +%s) - t0 )) s"

$BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1  # clocks up
bench 1 256 3
for n in 4 8 16 32; do
  prof=(); [ $n = 16 ] && prof=(--profile)
  BLUESHIFT_BATCH_GEMM=rowscm bench "$n-rowscm" 256 3 --parallel $n "${prof[@]}"
  BLUESHIFT_BATCH_GEMM=multi bench "$n-multi" 256 2 --parallel $n "${prof[@]}"
done
# At N = 16: subgroups plain,gated, the k step (8,4,0 is the default: 64) and 32 rows a workgroup (h, the
# default: heads only; 0: off); the plan caps the subgroups at shared memory.
for s in 8,4,0,h 8,4,0,0 8,2,0,h 8,6,0,h 16,4,0,h 8,4,128,h; do  # h: 32 rows a workgroup for the head only
  IFS=, read -r sg gsg bk r32 <<< "$s"
  (
    if [ "$r32" != h ]; then export BLUESHIFT_ROWSCM_R32=$r32; fi
    BLUESHIFT_ROWSCM_SG=$sg BLUESHIFT_ROWSCM_GATED_SG=$gsg BLUESHIFT_ROWSCM_BK=$bk bench "16-sg-$sg-$gsg-$bk-$r32" 128 2 --parallel 16
  )
done
echo "benches done $(( $(date +%s) - t0 )) s"

python3 - "$OUT" <<'PY'
import glob, os, sys
sys.path.insert(0, "benchmarks")
from serve_summary import best_by_kernel, issue_bar, load, profiles, step_table
out = sys.argv[1]
print("kernels alone (us, best of --wg; TF = TFLOP/s, GB/s of the weights once; gated: both matrices)")
for n in (4, 16, 32):
    for dt in ("q4k", "q6k"):
        g = load(out, f"gemv-{n}-{dt}.json")
        if not g:
            print(f"  N={n} {dt}: no results"); continue
        for r in g["results"]:
            if "skipped" in r:
                continue
            best = best_by_kernel(r)
            line = f"  N={n:<2} {dt} {r['m']:>6}x{r['k']:<5}"
            for kname in ("rowscm", "rowscm_k128", "rowscm_r32", "rowscm_gated", "multi"):
                c = best.get(kname)
                if c:
                    line += f"  {kname} {c['median_us']:7.1f} ({c['tflop_s']:5.1f} TF {c['gb_s']:5.0f} GB/s wg {c['wg']})"
            print(line)
names = [f"{n}-{g}" for n in (4, 8, 16, 32) for g in ("rowscm", "multi")]
names += sorted(os.path.basename(p)[6:-5] for p in glob.glob(os.path.join(out, "bench-16-sg-*.json")))
base = step_table(out, names, 16)
profiles(out, ("16-rowscm", "16-multi"), 9, 3)
d = load(out, "bench-16-rowscm.json")
issue_bar(base, d["aggregate_decode_tok_s"] if d else 0, "rowscm, the default at 16",
          "; sweep names: 16-sg-PLAIN-GATED subgroups-BK (0: default, 64)-R32 (h: heads only, the default; 0: off)")
PY
rm -rf /tmp/m1
