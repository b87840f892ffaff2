#!/usr/bin/env bash
# P6 (session 29): the Q6_K head with x staged once a workgroup in shared memory (q6k_sx.comp; build:
# glslc --target-env=vulkan1.2 -std=450 -O -Ikernels_glsl q6k_sx.comp -o spv6/q6k.sx.spv) against the registry's
# matvec_q6k (f8af7b4, best at wg 32 rows 4: 81.7-82.4 us and 150.0-150.5 us in P2 and P5).
# P5 refuted integer issue as the head's bound (fewer integer instructions ran 4-5% slower). The wide form reads as many
# bytes of x (through L1) as of weights: 8 KB a workgroup of 4 rows. Here x is read once per ROWS rows (16-128).
# Predicted: if x's loads bound the head, -15 to -30% (81.7 -> 57-70 us); if not, within +-5%.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
D=benchmarks/results/2026-11-29-h200-session29-scripts
rm -rf /tmp/o; mkdir -p /tmp/o
timeout 200 $BS bs_gemv_bench --json --reps 40 --rounds 2 --dtype q6k --shape 128256x2048,128256x4096 \
  --wg 128,256 --rows 16,32,64,128 --mv-spv $D/spv6 > /tmp/o/p6.json
timeout 100 $BS bs_gemv_bench --json --reps 40 --rounds 2 --dtype q6k --shape 128256x2048,128256x4096 \
  --wg 32 --rows 4 > /tmp/o/p6-base.json
python3 - /tmp/o/p6.json /tmp/o/p6-base.json <<'PY'
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    print(f"{f}: stream_read {d['measured_stream_gb_s']:.0f} GB/s")
    for r in d["results"]:
        print(f"{r['m']}x{r['k']} ({r['weight_bytes'] / 1e6:.0f} MB)")
        for kern in sorted({c["kernel"] for c in r["configs"]}):
            cs = sorted([c for c in r["configs"] if c["kernel"] == kern], key=lambda c: c["median_us"])
            for c in cs[:4]:
                print(f"  {kern:9} wg {c['wg']:3} rows {c['rows']:3}: {c['median_us']:7.1f} us {c['gb_s']:5.0f} GB/s"
                      f" | stream {c['stream_us']:7.1f} us {c['stream_gb_s']:5.0f} GB/s")
PY
cp /tmp/o/p6*.json $OUT/
