#!/usr/bin/env bash
# H100 (issue 17's last bar: serve's batched decode at N = 16 >= 6x batch 1): aggregate decode tok/s of
# `bench --parallel N` on a Llama-3.2-1B-shaped q4_k_m (synth, then convert) at N = 1, 4, 16, 32, the old
# batched matvec (a workgroup per sequence and row group) beside the multi-row matvec (W decoded once per
# step for up to 16 sequences, norms and the gated FFN folded), BLUESHIFT_BATCH_GEMM=matvec|multi; the
# GEMM at N = 32 (the old best there); then the multi-row kernel's shape at N = 16 (BLUESHIFT_MULTI_NB,
# _ROWS, _GATED_ROWS, _WG). Prompts of 128 random tokens, 256 generated, medians of 3 (the shape sweep:
# 128 generated, medians of 2); one step of each N profiled by kernel (bench --profile). About 2.5 minutes
# of device time; one table at the end.
#   benchmarks/serve_multi.sh      (carry .gl .dev/carry; writes $OUT)
#
# Prediction for N = 16 (multi, defaults NB 16, ROWS 4, gated 2 + 2, WG 64), per step of 16 tokens:
#   bytes: the weights once, 0.80 GB (0.27 ms at ~3 TB/s; x, KV and activations < 10 MB);
#   FLOPs: 16 x 2.47 GFLOP = 39.6 GFLOP of f32 FMAs (no tensor cores), the tied 128256-row Q6_K head
#     8.4 of them; each x value loaded from L1 serves 4 FMAs, the decode of a weight costs ~3 ops once
#     per 16 sequences: ~1.2-1.8 ms at 35-50% of the FP32 peak;
#   dispatches: 16 embed + 16 layers x (3 q/k/v + 16 rope_kv + 16 attention + o + gated FFN + down = 38)
#     + head = 625 (the old path 690), ~98 barriers: ~0.4-0.6 ms of launch and drain;
#   => ~2.3 ms a step (1.8-3.0), ~7,000 tok/s aggregate (5,300-8,900), ~8.4x batch 1's 826 tok/s.
#   N = 4: the same kernels with 4 of 16 batch slots used, FMA-light: ~1.3 ms a step, ~3,100 tok/s.
#   N = 32: two chunks of 16 (W decoded twice, from L2), ~4.2 ms a step, ~7,600 tok/s.
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
$BS blueshift bench --model /tmp/m1 --prompt-tokens 128 --gen-tokens 32 --reps 1 >/dev/null 2>&1  # clocks up
bench 1 256 3
for n in 4 16 32; do
  for g in matvec multi; do BLUESHIFT_BATCH_GEMM=$g bench "$n-$g" 256 3 --parallel $n --profile; done
done
BLUESHIFT_BATCH_GEMM=matmul bench 32-matmul 256 3 --parallel 32
# The multi-row kernel's shape at N = 16: NB, ROWS, GATED_ROWS, WG (the first is the default).
for s in 16,4,2,64 8,4,2,64 16,2,1,64 16,8,4,64 16,4,2,128 16,4,2,32; do
  IFS=, read -r nb rows grows wg <<< "$s"
  BLUESHIFT_BATCH_GEMM=multi BLUESHIFT_MULTI_NB=$nb BLUESHIFT_MULTI_ROWS=$rows BLUESHIFT_MULTI_GATED_ROWS=$grows \
    BLUESHIFT_MULTI_WG=$wg bench "16-shape-$nb-$rows-$grows-$wg" 128 2 --parallel 16
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
b1 = load("1")
base = b1["decode_tok_s"] if b1 else 0
print(f"{'run':>22} {'aggregate tok/s':>15} {'per stream':>10} {'ms/step':>8} {'x batch 1':>9}")
if b1:
    print(f"{'1 (Session loop)':>22} {base:>15.1f} {base:>10.1f} {1e3 / base:>8.3f} {1.0:>9.2f}")
names = [f"{n}-{g}" for n in (4, 16, 32) for g in ("matvec", "multi")] + ["32-matmul"]
names += sorted(os.path.basename(p)[6:-5] for p in glob.glob(os.path.join(out, "bench-16-shape-*.json")))
for name in names:
    d = load(name)
    if not d:
        print(f"{name:>22} failed"); continue
    x = d["aggregate_decode_tok_s"] / base if base else 0
    print(f"{name:>22} {d['aggregate_decode_tok_s']:>15.1f} {d['per_stream_decode_tok_s']:>10.1f} {d['ms_per_step']:>8.3f} {x:>9.2f}")
# GPU time by kernel of one profiled step (timestamps after every dispatch serialize it: shares, not a step time).
for name in ("16-matvec", "16-multi"):
    d = load(name) or {}
    by = d.get("profile_ms_by_kernel")
    if by:
        top = sorted(by.items(), key=lambda kv: -kv[1])[:8]
        print(f"profile {name}: {d['profile_step_ms']:.2f} ms: " + ", ".join(f"{k} {v:.2f}" for k, v in top))
best = max((load(n) or {}).get("aggregate_decode_tok_s", 0) for n in ["16-multi"] + [n for n in names if "shape" in n])
if base:
    r = best / base
    print(f"issue bar: N=16 aggregate (multi, best shape) {r:.2f}x batch 1 ({'meets' if r >= 6 else 'misses'} >= 6x); "
          "shape names: NB-ROWS-GATED_ROWS-WG")
PY
rm -rf /tmp/m1
