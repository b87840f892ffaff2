#!/usr/bin/env bash
# P5 (session 29): the Q6_K matvec's codes made floats through f16 pairs (q6k_h.comp: one mask gives (1024 + q) for
# two codes, one packed subtract of 1056 gives q - 32 exactly, widened to f32; 3 integer instructions per 4 weights
# against bs_six's 8; products and sums in f32 as before) against the registry's matvec_q6k (f8af7b4: P1's wide form).
# Build: glslc --target-env=vulkan1.2 -std=450 -O -Ikernels_glsl q6k_h.comp -o spv/q6k.h.spv
# Predicted: if the head is bound by integer issue (2 a weight at half the float rate), -15 to -25% isolated on the
# heads (81.7 -> 62-70 us, 150 -> 115-128); if by memory latency, within +-3%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
D=benchmarks/results/2026-11-29-h200-session29-scripts
rm -rf /tmp/o; mkdir -p /tmp/o
timeout 300 $BS bs_gemv_bench --json --reps 40 --rounds 2 --dtype q6k --shape 128256x2048,128256x4096,4096x14336,14336x4096 \
  --wg 32,64,128 --rows 2,4,8 --mv-spv $D/spv > /tmp/o/p5.json
python3 - /tmp/o/p5.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"stream_read {d['measured_stream_gb_s']:.0f} GB/s")
for r in d["results"]:
    print(f"{r['m']}x{r['k']} ({r['weight_bytes'] / 1e6:.0f} MB)")
    for kern in sorted({c["kernel"] for c in r["configs"]}):
        cs = sorted([c for c in r["configs"] if c["kernel"] == kern], key=lambda c: c["median_us"])
        for c in cs[:3]:
            print(f"  {kern:9} wg {c['wg']:3} rows {c['rows']}: {c['median_us']:7.1f} us {c['gb_s']:5.0f} GB/s"
                  f" | stream {c['stream_us']:7.1f} us {c['stream_gb_s']:5.0f} GB/s")
PY
cp /tmp/o/p5.json $OUT/
