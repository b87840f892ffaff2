#!/usr/bin/env bash
# R3 (session 33): what bounds the Q6_K head's matvec. R2's prefetch of the next row group lost (pipe4 at 16-64 rows
# 98-100 us against the registry's 81.9 on the 1B head), so loads in flight a warp are not what it lacks. Timing
# bounds of q6k_pipe.comp without PIPE (seq: G rows at a time in order; at ROWS = G it is the registry's kernel):
# lds (LOADS_ONLY: the weight words folded by XORs in place of the math), nox (NO_X: the same two vec4s of x for every part), ldsnox (both).
# Count: ~3.6 instructions a weight (q6k_codes 10, bs_six 32, 16 FMAs a 16-weight word) -> the 1B head's 263 M
# weights take ~29 us of the H200's issue at full rate; at the 52 us floor the ALUs would be ~55% busy.
# Predicted: if the math bounds it, lds4 near the floor (55-60 us) and nox4 as seq4; if the access pattern or
# occupancy does, lds4 within 10% of seq4. Registers from BLUESHIFT_PIPELINE_STATS=1.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
D=benchmarks/results/2026-11-30-h200-session33-scripts
rm -rf /tmp/o; mkdir -p /tmp/o
BLUESHIFT_PIPELINE_STATS=1 timeout 400 $BS bs_gemv_bench --json --reps 40 --rounds 2 --dtype q6k \
  --shape 128256x2048,128256x4096 --wg 32 --rows 2,4,8,16 --mv-spv $D/spv > /tmp/o/r3.json 2> /tmp/o/r3.err
grep -i "register" /tmp/o/r3.err | sed -E 's/.*(q6k\.[a-z0-9]+|matvec_q6k[a-z_]*).*Register Count=([0-9]+).*/\1 \2/' | sort -u
python3 - /tmp/o/r3.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"stream_read {d['measured_stream_gb_s']:.0f} GB/s")
g = {"seq2": 2, "lds2": 2}
for r in d["results"]:
    print(f"{r['m']}x{r['k']} ({r['weight_bytes'] / 1e6:.0f} MB)")
    for kern in sorted({c["kernel"] for c in r["configs"]}):
        if kern == "registry": continue
        cs = [c for c in r["configs"] if c["kernel"] == kern and c["rows"] >= g.get(kern, 4)]
        for c in sorted(cs, key=lambda c: c["rows"]):
            print(f"  {kern:9} wg {c['wg']:3} rows {c['rows']:2}: {c['median_us']:7.1f} us {c['gb_s']:5.0f} GB/s"
                  f" | stream {c['stream_us']:7.1f} us {c['stream_gb_s']:5.0f} GB/s")
PY
cp /tmp/o/r3.json /tmp/o/r3.err $OUT/
