#!/usr/bin/env bash
# P1 (session 29): the Q6_K head's matvec with 16-byte loads of 64 weights a lane (q6k_wide.comp, built by
# `glslc --target-env=vulkan1.2 -std=450 -O -Ikernels_glsl q6k_wide.comp -o spv/q6k.wide.spv`) against the registry's
# matvec_q6k (8-byte parts of 32 weights), both swept over wg x rows in one bs_gemv_bench run, isolated and streamed.
# Count: the 1B's head 128256x2048 is 230 MB at 224 bytes a block (216 MB of GGML bytes), the 8B's 460 MB; at the
# measured ~4.5 TB/s, 51 and 102 us. The model's head (wg 32, 2 rows) took 0.094 and 0.178 ms a step (session 28).
# Predicted: wide reaches 3.3-3.8 TB/s on the heads (61-70 us and 121-139 us), against the registry's ~2.4-2.5.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
D=benchmarks/results/2026-11-29-h200-session29-scripts
rm -rf /tmp/o; mkdir -p /tmp/o
timeout 400 $BS bs_gemv_bench --json --reps 40 --rounds 2 --dtype q6k --shape 128256x2048,128256x4096,4096x14336,14336x4096 \
  --wg 32,64,128,256 --rows 1,2,4,8 --mv-spv $D/spv > /tmp/o/p1.json
python3 - /tmp/o/p1.json <<'PY'
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
timeout 100 $BS bs_gemv_bench --reps 40 --dtype f16 --shape 128256x2048 --wg 32,64 --rows 1,2 | tail -4
cp /tmp/o/p1.json $OUT/
