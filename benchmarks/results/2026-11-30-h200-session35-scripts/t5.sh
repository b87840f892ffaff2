#!/usr/bin/env bash
# T5 (session 35): argmax key slices of 128 and 256 rows against 512, done right. T1's slice-128 bundle had the host at
# 128 but its kernels at 512: the build did not rebuild kernels when params.h changed (kernels_glsl/CMakeLists.txt
# listed only *.glsl as their includes; fixed in this session). So T1 timed the sampler's 4x keys, not the head's.
# $BS = 512 (26a42df's value), $OLD = 128, /tmp/b256 = 256: the same tree otherwise (with the CMake fix).
# Count (1B, 128,256-row head, 4 rows a workgroup): 512 -> 251 keys, ~128 subgroup atomics a key line; 256 -> 502
# keys, 64 a line; 128 -> 1,002 keys, 32 a line. Predicted: the head -0.5 to -1.5 us at 128-256 (session 34's line
# contention: +1.3-3 us at 512); the sampler +0.5 us at 256, +2 at 128 (T1). Net within +-0.2% tok/s.
# bench 512 + 128, medians of 5. Carry .gl, .dev/carry, .dev/carry2 and .dev/carry5.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
. benchmarks/ab_common.sh
mkdir -p /tmp/t5 /tmp/b256 && tar -C /tmp/b256 -xJf .dev/carry5/bundle-256.tar.xz && cp -r /tmp/bs/bundle/lib /tmp/b256/bundle/
B256=/tmp/b256/bundle/run
show() {
  python3 - "$@" <<'PY'
import json, sys
o = sys.argv[1]
for n in sys.argv[2:]:
    d = json.load(open(f"{o}/{n}.json"))
    s = {k: round(v * 1000, 1) for k, v in d["gpu_ms_by_dispatch"].items() if k.startswith(("matvec q6k 128256", "sample"))}
    print(f"  {n:8s} {d['decode_tok_s']:8.1f} tok/s, us: {s}")
PY
}
for cfg in llama-3.2-1b llama-3.1-8b; do
  rm -rf /tmp/m; mkdir -p /tmp/m; ab_model $BS benchmarks/configs/$cfg.json q4_k_m /tmp/m
  o=/tmp/t5/$cfg; mkdir -p $o
  $BS blueshift bench --model /tmp/m/m --prompt-tokens 16 --gen-tokens 16 --reps 1 --json > $o/warm.json 2>/dev/null
  echo "== $cfg q4_k_m"
  ab_bench $o s512a $BS /tmp/m/m 512 128 5
  ab_bench $o s128a $OLD /tmp/m/m 512 128 5
  ab_bench $o s256a $B256 /tmp/m/m 512 128 5
  if [ $cfg = llama-3.2-1b ]; then
    ab_bench $o s512b $BS /tmp/m/m 512 128 5
    ab_bench $o s128b $OLD /tmp/m/m 512 128 5
    ab_bench $o s256b $B256 /tmp/m/m 512 128 5
    show $o s512a s128a s256a s512b s128b s256b
  else
    show $o s512a s128a s256a
  fi
  stamp "$cfg done"
  tar -C /tmp -cJf $OUT/t5.tar.xz t5
done
