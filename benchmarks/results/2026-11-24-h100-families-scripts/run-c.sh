#!/usr/bin/env bash
# H100 run C (session 3, 2026-11-24): the Phi-3 LongRoPE golden (scripts/make_longrope_ref.py) and its parity
# here, then DOPPLER's manifests (models/local/ of clocksmith/doppler) each through info, synth --like,
# verify and generate --max-tokens 8, from START (default 0) while time lasts. Output: $OUT/run-c.tar.
set -uo pipefail
. benchmarks/lease_setup.sh >/dev/null 2>&1
OUT=${OUT:-/tmp/out}; R=/tmp/run-c; mkdir -p "$OUT" $R /tmp/like
T0=$(date +%s)
{
if [ "${START:-0}" = 0 ]; then
echo "== Phi-3 LongRoPE golden"
python3 scripts/make_longrope_ref.py $R/golden 2>&1 | grep -v "^{\|^ \|^}" | tail -4
G=$R/golden/phi3-longrope
python3 - "$BS" "$G" <<'PY'
import json, subprocess, sys, os
import numpy as np
bs, g = sys.argv[1], sys.argv[2]
ref = json.load(open(os.path.join(g, "ref.json")))
for name, n in (("logits_full.npy", 48), ("logits_short.npy", 24)):
    want = np.load(os.path.join(g, name))
    toks = ",".join(map(str, ref["tokens"][:n]))
    for step in (False, True):
        subprocess.run([bs, "blueshift", "logits", "--model", g, "--tokens", toks, "--out", "/tmp/l.npy"] + (["--step"] if step else []),
                       check=True, capture_output=True)
        got = np.load("/tmp/l.npy")
        rel = (np.linalg.norm(got - want, axis=1) / np.linalg.norm(want, axis=1)).max()
        print(f"phi3-longrope {n} tokens ({'long' if n > 32 else 'short'} factors) {'decode ' if step else 'prefill'}: worst rel L2 {rel:.2e}, top-1 {100*(got.argmax(1)==want.argmax(1)).mean():.1f}%")
r = subprocess.run([bs, "blueshift", "generate", "--model", g, "--prompt-tokens", ",".join(map(str, ref["prompt"])), "--temperature", "0",
                    "--ignore-eos", "--max-tokens", "24", "--ctx", "32"], check=True, capture_output=True, text=True)
ids = [int(t) for t in r.stdout.split()]
print("phi3-longrope greedy (--ctx 32)", "MATCH" if ids == ref["greedy"] else f"DIFFER {ids} vs {ref['greedy']}")
PY
fi
echo "== DOPPLER manifests: info, synth --like, verify, generate --max-tokens 8"
i=0
for d in $(ls $SHARED/data/doppler | sort); do
  i=$((i+1)); [ $i -le ${START:-0} ] && continue
  if [ $(( $(date +%s) - T0 )) -gt ${BUDGET_S:-500} ]; then echo "$i $d: not reached (time)"; continue; fi
  m=$SHARED/data/doppler/$d/manifest.json
  info=$(timeout 30 $BS blueshift info $SHARED/data/doppler/$d 2>&1); irc=$?
  cfg=$(echo "$info" | grep -m1 "not runnable" | sed 's/^config *//')
  t0=$(date +%s)
  timeout 150 $BS blueshift synth --like $m /tmp/like/$d --seed 1 > $R/$d.synth.txt 2>&1; src=$?
  if [ $src != 0 ]; then echo "$i $d: info rc $irc ${cfg:+[$cfg] }synth FAILED: $(tail -1 $R/$d.synth.txt)"; rm -rf /tmp/like/$d; continue; fi
  size=$(du -sh /tmp/like/$d | cut -f1)
  timeout 100 $BS blueshift verify /tmp/like/$d > $R/$d.verify.txt 2>&1; vrc=$?
  timeout 150 $BS blueshift generate --model /tmp/like/$d --prompt-tokens 2,106,1645,4099 --max-tokens 8 --ignore-eos > $R/$d.gen.txt 2> $R/$d.gen.err; grc=$?
  gen=$(tail -1 $R/$d.gen.err | cut -c1-150)
  echo "$i $d: $size, info rc $irc${cfg:+ [$cfg]}, synth $(( $(date +%s) - t0 ))s, verify rc $vrc, generate rc $grc: $gen"
  rm -rf /tmp/like/$d
done
} 2>&1 | tee $R/run-c.txt
rm -rf $R/golden/phi3-longrope/model.safetensors.tmp 2>/dev/null
tar -C /tmp -cf "$OUT/run-c.tar" run-c
