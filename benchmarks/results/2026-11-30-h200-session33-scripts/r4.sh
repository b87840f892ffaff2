#!/usr/bin/env bash
# R4 (session 33): the Q6_K head's matvec on int8 dot products (matvec_q6k_wide_i8 of 1f1761a: spv/q6k.i8.spv is
# build/kernels_glsl/spv/matvec_q6k_wide_i8.spv; q6k.i8one.spv the same with -DQ8X_ONE_LEVEL, a speed bound only)
# against the float form (spv/q6k.wide.spv, the registry's matvec_q6k_wide), isolated. The bench binds x as k floats;
# the i8 forms read k / 256 x 640 bytes of it as quantized x (timing only: the values are random).
# R3 found the float form bound by its math: loads alone 62.5 / 115 us against 81.9 / 150.3 (1B / 8B heads), and
# without x's loads 74 / 136. The int8 form: ~100 instructions a part and row (40 for the codes, 32 packed dots, the
# conversions and scales) against ~230, and 192 bytes of x a part against 256.
# Predicted: i8 at 4 rows 66-70 us (1B head) and 122-130 us (8B), i8one 2-5% below that.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
D=benchmarks/results/2026-11-30-h200-session33-scripts
rm -rf /tmp/o; mkdir -p /tmp/o
BLUESHIFT_PIPELINE_STATS=1 timeout 400 $BS bs_gemv_bench --json --reps 40 --rounds 2 --dtype q6k \
  --shape 128256x2048,128256x4096 --wg 32,64 --rows 2,4,8 --mv-spv $D/spv > /tmp/o/r4.json 2> /tmp/o/r4.err
grep -i "register" /tmp/o/r4.err | sed -E 's/.*(q6k\.[a-z0-9]+|matvec_q6k[a-z_]*).*Register Count=([0-9]+).*/\1 \2/' | sort -u
python3 - /tmp/o/r4.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"stream_read {d['measured_stream_gb_s']:.0f} GB/s")
for r in d["results"]:
    print(f"{r['m']}x{r['k']} ({r['weight_bytes'] / 1e6:.0f} MB)")
    for kern in sorted({c["kernel"] for c in r["configs"]}):
        if kern == "registry": continue
        for c in sorted([c for c in r["configs"] if c["kernel"] == kern], key=lambda c: (c["wg"], c["rows"])):
            print(f"  {kern:9} wg {c['wg']:3} rows {c['rows']:2}: {c['median_us']:7.1f} us {c['gb_s']:5.0f} GB/s"
                  f" | stream {c['stream_us']:7.1f} us {c['stream_gb_s']:5.0f} GB/s")
PY
cp /tmp/o/r4.json /tmp/o/r4.err $OUT/
