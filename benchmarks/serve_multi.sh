#!/usr/bin/env bash
# H100 (issue 17's last bar: serve's batched decode at N = 16 >= 6x batch 1): aggregate decode tok/s of
# `bench --parallel N` on a Llama-3.2-1B-shaped q4_k_m (synth, then convert) at N = 1, 4, 16, 32:
#   old:   the batched matvec (a workgroup per sequence and row group), RoPE + KV and attention a dispatch
#          per sequence (BLUESHIFT_BATCH_GEMM=matvec BLUESHIFT_BATCH_PER_ROW=1: the path of 2026-11-24);
#   lanes: the default now: the multi-row matvec with lanes across rows of W (matvec_lanes.glsl: W decoded
#          once per step for up to 16 sequences, each X load a broadcast to a subgroup's 32 x ROWS rows),
#          embedding, RoPE + KV and attention one dispatch for all sequences;
# at N = 16 also: lanes with a dispatch per sequence (the two changes apart), multi (the first multi-row
# kernel, lanes across k: 7.9 ms a step on the H100 at 6eec232); the GEMM at N = 32 (the old best there);
# then the lanes kernel's shape at N = 16 (BLUESHIFT_MULTI_NB, BLUESHIFT_LANES_ROWS, _GATED_ROWS, _WG).
# First the kernels alone (bs_gemv_bench --multi 16: the 1B's matrix shapes, batched vs multi vs lanes,
# best of workgroup 64 / 128 / 256 x rows 1 / 2 / 4). Prompts of 128 random tokens, 256 generated, medians
# of 3 (the old paths, known from 2026-11-24, and the shape sweep at 128 generated: medians of 2); one step
# of each N profiled by kernel (bench --profile). About 3 to 4 minutes of device time; compact tables.
#   benchmarks/serve_multi.sh      (carry .gl .dev/carry; writes $OUT)
#
# Prediction for N = 16 (lanes, defaults NB 16, ROWS 2, gated 1 + 1, 8 slices of 32), per step of 16 tokens:
#   bytes: the weights once, 0.80 GB (0.27 ms at ~3 TB/s); X from L2 ~N x 4 / (32 x 2 x 0.56) = 1.8x the
#     weights at worst (less where workgroups on one SM share X in L1); KV and activations < 10 MB;
#   FLOPs: 16 x 2.47 GFLOP = 39.6 GFLOP of f32 FMAs (no tensor cores), the tied 128256-row Q6_K head 8.4
#     of them; a lane spends ~400 instructions a part (8 weights x 2 rows decoded, 16 x (2 broadcast loads
#     + 16 FMAs)) for 256 FMAs: ~1.1 ms at the FP32 peak's issue rate, ~1.5-2 ms with stalls;
#   dispatches: embed + 16 layers x (rms, q, k, v, rope_kv, attention, o, rms, gated FFN, down = 10) + rms
#     + head = 163, and the 16 samplers: 179 (the old path 706), ~132 barriers (old 147): ~0.3-0.5 ms;
#   => ~2.3 ms a step (1.8-3.2), ~7,000 tok/s aggregate (5,000-8,900), ~8.4x batch 1's 826 tok/s.
#   N = 4: ~1.2 ms a step, ~3,300 tok/s; N = 32: two chunks of 16, ~4.2 ms a step, ~7,600 tok/s.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
t0=$(date +%s)
$BS blueshift synth --config benchmarks/configs/llama-3.2-1b.json /tmp/hf1 --seed 1 --tokenizer builtin >/dev/null
$BS blueshift convert /tmp/hf1 /tmp/m1 --quant q4_k_m >/dev/null; rm -rf /tmp/hf1
echo "synth + convert $(( $(date +%s) - t0 )) s"

# bench NAME GEN REPS [bench args...] (environment from the caller): bench-NAME.json, or a line saying why not.
bench() {
  local name=$1 gen=$2 reps=$3; shift 3
  timeout 60 $BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens "$gen" --reps "$reps" --json "$@" \
    > "$OUT/bench-$name.json" 2> "$OUT/bench-$name.err" || { echo "bench $name failed"; tail -3 "$OUT/bench-$name.err"; }
}
timeout 120 $BS bs_gemv_bench --multi 16 --dtype q4k,q6k --shape 2048x2048,512x2048,8192x2048,2048x8192,128256x2048 \
  --wg 64,128,256 --rows 1,2,4 --reps 10 --json > "$OUT/gemv-multi16.json" 2> "$OUT/gemv-multi16.err" \
  || { echo "bs_gemv_bench --multi 16 failed"; tail -3 "$OUT/gemv-multi16.err"; }
echo "kernels done $(( $(date +%s) - t0 )) s"
$BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1  # clocks up
bench 1 256 3
for n in 4 16 32; do
  BLUESHIFT_BATCH_GEMM=matvec BLUESHIFT_BATCH_PER_ROW=1 bench "$n-old" 256 2 --parallel $n --profile  # known: 2 reps
  BLUESHIFT_BATCH_GEMM=lanes bench "$n-lanes" 256 3 --parallel $n --profile
done
BLUESHIFT_BATCH_GEMM=lanes BLUESHIFT_BATCH_PER_ROW=1 bench 16-lanes-perrow 256 3 --parallel 16
BLUESHIFT_BATCH_GEMM=multi bench 16-multi 256 2 --parallel 16
BLUESHIFT_BATCH_GEMM=matmul BLUESHIFT_BATCH_PER_ROW=1 bench 32-matmul-old 256 2 --parallel 32
# The lanes kernel's shape at N = 16: NB, ROWS, GATED_ROWS, WG (the first is the default).
for s in 16,2,1,256 16,1,1,256 16,4,2,256 16,2,2,256 16,2,1,128 8,2,1,256; do
  IFS=, read -r nb rows grows wg <<< "$s"
  BLUESHIFT_BATCH_GEMM=lanes BLUESHIFT_MULTI_NB=$nb BLUESHIFT_LANES_ROWS=$rows BLUESHIFT_LANES_GATED_ROWS=$grows \
    BLUESHIFT_LANES_WG=$wg bench "16-shape-$nb-$rows-$grows-$wg" 128 2 --parallel 16
done
echo "benches done $(( $(date +%s) - t0 )) s"

python3 - "$OUT" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
def load(name):
    try:
        return json.load(open(os.path.join(out, f"bench-{name}.json")))
    except Exception:
        return None
try:
    g = json.load(open(os.path.join(out, "gemv-multi16.json")))
    print(f"kernels at N = 16 ({g['device']}): best of wg x rows; weights read once")
    for r in g["results"]:
        if "skipped" in r:
            continue
        best = {}
        for c in r["configs"]:
            b = best.get(c["kernel"])
            if b is None or c["median_us"] < b["median_us"]:
                best[c["kernel"]] = c
        line = f"  {r['dtype']:<4} {r['m']:>6}x{r['k']:<5}"
        for kname in ("batched", "multi", "lanes"):
            c = best.get(kname)
            if c:
                line += f"  {kname} {c['median_us']:7.1f} us {c['tflop_s']:5.2f} TF (wg {c['wg']} r {c['rows']})"
        print(line)
except Exception as e:
    print(f"kernels: no results ({e})")
b1 = load("1")
base = b1["decode_tok_s"] if b1 else 0
print(f"{'run':>22} {'aggregate tok/s':>15} {'per stream':>10} {'ms/step':>8} {'x batch 1':>9} {'dispatches/barriers a step':>27}")
if b1:
    print(f"{'1 (Session loop)':>22} {base:>15.1f} {base:>10.1f} {1e3 / base:>8.3f} {1.0:>9.2f}")
names = [f"{n}-{g}" for n in (4, 16, 32) for g in ("old", "lanes")] + ["16-lanes-perrow", "16-multi", "32-matmul-old"]
names += sorted(os.path.basename(p)[6:-5] for p in glob.glob(os.path.join(out, "bench-16-shape-*.json")))
for name in names:
    d = load(name)
    if not d:
        print(f"{name:>22} failed"); continue
    x = d["aggregate_decode_tok_s"] / base if base else 0
    print(f"{name:>22} {d['aggregate_decode_tok_s']:>15.1f} {d['per_stream_decode_tok_s']:>10.1f} {d['ms_per_step']:>8.3f} {x:>9.2f} "
          f"{d.get('dispatches_per_step', 0):>18.0f} / {d.get('barriers_per_step', 0):<6.0f}")
# GPU time by kernel of one profiled step (timestamps after every dispatch serialize it: shares, not a step time).
for name in ("16-old", "16-lanes"):
    d = load(name) or {}
    by = d.get("profile_ms_by_kernel")
    if by:
        top = sorted(by.items(), key=lambda kv: -kv[1])[:8]
        print(f"profile {name}: {d['profile_step_ms']:.2f} ms: " + ", ".join(f"{k} {v:.2f}" for k, v in top))
best = max((load(n) or {}).get("aggregate_decode_tok_s", 0) for n in ["16-lanes"] + [n for n in names if "shape" in n])
if base:
    r = best / base
    print(f"issue bar: N=16 aggregate (lanes, best shape) {r:.2f}x batch 1 ({'meets' if r >= 6 else 'misses'} >= 6x); "
          "shape names: NB-ROWS-GATED_ROWS-WG")
PY
rm -rf /tmp/m1
