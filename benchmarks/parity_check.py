#!/usr/bin/env python3
"""Compares `blueshift logits` (prefill and --step) with HF's logits for the shared tiny models.
Usage: parity_check.py RUNNER MODELS_DIR [model ...]   (RUNNER runs a bundled program: RUNNER blueshift ...)
As tests/model/test_parity.cpp does: BLUESHIFT_ROPE_FREQ_BF16=1 (the references' RoPE frequencies went through
bfloat16 with the weights), and --precision f32 (f32 KV cache and prefill matmuls) for Gemma 4."""
import json, subprocess, sys, tempfile, os
import numpy as np

runner, models = sys.argv[1], sys.argv[2]
names = sys.argv[3:] or sorted(os.listdir(models))
tmp = tempfile.mkdtemp()
env = dict(os.environ, BLUESHIFT_ROPE_FREQ_BF16="1")
for name in names:
    d = os.path.join(models, name)
    ref = json.load(open(os.path.join(d, "ref.json")))
    want = np.load(os.path.join(d, "logits_full.npy"))
    toks = ",".join(map(str, ref["tokens"]))
    extra = ["--precision", "f32"] if name.startswith("gemma4") else []
    for step in (False, True):
        out = os.path.join(tmp, "l.npy")
        cmd = [runner, "blueshift", "logits", "--model", d, "--tokens", toks, "--out", out] + (["--step"] if step else []) + extra
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        got = np.load(out)
        rel = (np.linalg.norm(got - want, axis=1) / np.linalg.norm(want, axis=1)).max()
        top1 = (got.argmax(1) == want.argmax(1)).mean()
        print(f"{name:12s} {'decode ' if step else 'prefill'} worst rel L2 {rel:.2e}  top-1 {100*top1:.1f}%")
    prompt = ",".join(map(str, ref["prompt"]))
    r = subprocess.run([runner, "blueshift", "generate", "--model", d, "--prompt-tokens", prompt, "--temperature", "0",
                        "--ignore-eos", "--max-tokens", str(len(ref["greedy"]))] + extra, check=True, capture_output=True, text=True,
                       env=env)
    ids = [int(t) for t in r.stdout.split()]
    print(f"{name:12s} greedy {'MATCH' if ids == ref['greedy'] else 'DIFFER'}  ({r.stderr.strip().splitlines()[-1]})")
