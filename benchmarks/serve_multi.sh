#!/usr/bin/env bash
# H100 (issue 17's last bar: serve's batched decode at N = 16 >= 6x batch 1): aggregate decode tok/s of
# `bench --parallel N` on a Llama-3.2-1B-shaped q4_k_m (synth, then convert) at N = 1, 4, 16, 32:
#   old:     the batched matvec (a workgroup per sequence and row group), RoPE + KV and attention a dispatch
#            per sequence (BLUESHIFT_BATCH_GEMM=matvec BLUESHIFT_BATCH_PER_ROW=1: the path of 2026-11-24);
#   default: the best measured whole step (6eec232 sweep: 5.8 ms at N = 16): the multi-row matvec (lanes
#            across k) at NB 8, ROWS 4, gated 2 + 2, 64 invocations, norms folded; now with RoPE + KV and
#            attention one dispatch for all sequences (4fbc4ff: 3.65 + 1.68 -> 0.56 + 0.12 ms profiled);
# at N = 16 also: "tuned", the 4fbc4ff kernel table's picks (ROWS 1, gated 1 + 1, 128 invocations, norms as
# dispatches, the batched matvec for the down projection), and lanes; the GEMM at N = 32; the multi
# kernel's shape at N = 16 (BLUESHIFT_MULTI_NB, _ROWS, _GATED_ROWS, _WG, _FOLD, _LONG). First the kernels alone at NB 8 (bs_gemv_bench --multi 8: the 1B's shapes,
# batched vs multi vs lanes; at N = 16 the multi kernels run twice). Prompts of 128 random tokens, 256
# generated, medians of 3 (old paths and the shape sweep: fewer); one step of each profiled by kernel
# (bench --profile). About 3 to 4 minutes of device time; compact tables.
#   benchmarks/serve_multi.sh      (carry .gl .dev/carry; writes $OUT)
#
# Prediction for N = 16 (default): the 6eec232 step of this shape (5.8 ms) less most of what one dispatch
#   for RoPE + attention saved (~1-1.5 ms of a real step): ~4.6 ms (4.2-5.8), ~3,500 tok/s, ~4.2x batch 1;
#   "tuned", from the 4fbc4ff kernel table (NB 16 figures): per layer rms + q 30 us + k, v 2 x 13 + RoPE /
#   attention ~35 + o 30 + rms + gate/up ~155 + down 84 = ~370 us, x 16 + head 1.04 ms: ~7 ms. Short of 6x. The bytes (0.8 GB, 0.27 ms) and the
#   FLOPs (39.6 GFLOP f32) are not the bound: the best scalar kernels reach 5-8 TFLOP/s (of 67), limited by
#   how each lane feeds its FMAs (x from L1 per row group, or W a line per lane). 6x needs the FMAs on
#   tensor cores (a 16-row f16 X fragment against W decoded to f16 fragments, k split over subgroups).
#   dispatches: embed + 16 x (rms, q, k, v, rope_kv, attention, o, rms, gated, down) + rms + head + 16
#   samplers = 179; ~132 barriers.
set -uo pipefail
. benchmarks/serve_common.sh
serve_model
timeout 120 $BS bs_gemv_bench --multi 8 --dtype q4k,q6k --shape 2048x2048,512x2048,8192x2048,2048x8192,128256x2048 \
  --wg 64,128,256 --rows 1,2 --reps 10 --json > "$OUT/gemv-multi8.json" 2> "$OUT/gemv-multi8.err" \
  || { echo "bs_gemv_bench --multi 8 failed"; tail -3 "$OUT/gemv-multi8.err"; }
echo "kernels done $(( $(date +%s) - t0 )) s"
$BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1  # clocks up
bench 1 256 3
for n in 4 16 32; do
  BLUESHIFT_BATCH_GEMM=matvec BLUESHIFT_BATCH_PER_ROW=1 bench "$n-old" 256 2 --parallel $n --profile  # known: 2 reps
  bench "$n-default" 256 3 --parallel $n --profile
done
BLUESHIFT_MULTI_ROWS=1 BLUESHIFT_MULTI_GATED_ROWS=1 BLUESHIFT_MULTI_WG=128 BLUESHIFT_MULTI_FOLD=0 BLUESHIFT_MULTI_LONG=1 \
  bench 16-tuned 256 2 --parallel 16 --profile
BLUESHIFT_BATCH_GEMM=lanes bench 16-lanes 128 2 --parallel 16
BLUESHIFT_BATCH_GEMM=matmul BLUESHIFT_BATCH_PER_ROW=1 bench 32-matmul-old 256 2 --parallel 32
# The multi kernel's shape at N = 16: NB, ROWS, GATED_ROWS, WG, FOLD, LONG (8,2,1,64,1,0 is the default since session 5).
for s in 8,4,2,64,1,0 8,4,2,64,1,1 8,4,2,64,0,0 8,2,1,64,1,0 8,4,2,128,1,0 4,4,2,64,1,0; do
  IFS=, read -r nb rows grows wg fold long <<< "$s"
  BLUESHIFT_MULTI_NB=$nb BLUESHIFT_MULTI_ROWS=$rows BLUESHIFT_MULTI_GATED_ROWS=$grows BLUESHIFT_MULTI_WG=$wg \
    BLUESHIFT_MULTI_FOLD=$fold BLUESHIFT_MULTI_LONG=$long bench "16-shape-$nb-$rows-$grows-$wg-$fold-$long" 128 2 --parallel 16
done
echo "benches done $(( $(date +%s) - t0 )) s"

python3 - "$OUT" <<'PY'
import glob, os, sys
sys.path.insert(0, "benchmarks")
from serve_summary import best_by_kernel, issue_bar, load, profiles, step_table
out = sys.argv[1]
g = load(out, "gemv-multi8.json")
if g:
    print(f"kernels at N = 8 ({g['device']}): best of wg x rows; weights read once")
    for r in g["results"]:
        if "skipped" in r:
            continue
        best = best_by_kernel(r)
        line = f"  {r['dtype']:<4} {r['m']:>6}x{r['k']:<5}"
        for kname in ("batched", "multi", "lanes"):
            c = best.get(kname)
            if c:
                line += f"  {kname} {c['median_us']:7.1f} us {c['tflop_s']:5.2f} TF (wg {c['wg']} r {c['rows']})"
        print(line)
else:
    print("kernels: no results")
names = [f"{n}-{g}" for n in (4, 16, 32) for g in ("old", "default")] + ["16-tuned", "16-lanes", "32-matmul-old"]
names += sorted(os.path.basename(p)[6:-5] for p in glob.glob(os.path.join(out, "bench-16-shape-*.json")))
base = step_table(out, names, 22)
profiles(out, ("16-old", "16-default", "16-tuned"), 8, 2)
best = max((load(out, f"bench-{n}.json") or {}).get("aggregate_decode_tok_s", 0)
           for n in ["16-default"] + [n for n in names if "shape" in n])
issue_bar(base, best, "default, best shape", "; shape names: NB-ROWS-GATED_ROWS-WG-FOLD-LONG")
PY
rm -rf /tmp/m1
