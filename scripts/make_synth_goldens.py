#!/usr/bin/env python3
"""Goldens for the project's own synthesized models, computed by HF transformers in float32.
Runs on the GPU lease machine (its image has torch + transformers):
    python3 scripts/make_synth_goldens.py RUNNER tests/model/goldens OUT_DIR
For each NAME.config.json in the goldens folder: `blueshift synth --seed 7` writes the checkpoint,
transformers computes float32 logits of the fixed token sequence below, and OUT_DIR/NAME.logits.npy
plus OUT_DIR/NAME.ref.json are written (commit them to tests/model/goldens/)."""
import glob, json, os, subprocess, sys
import numpy as np
import torch
from transformers import AutoModelForCausalLM

runner, gold, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
for cfg in sorted(glob.glob(os.path.join(gold, "*.config.json"))):
    name = os.path.basename(cfg)[: -len(".config.json")]
    ck = f"/tmp/golden-{name}"
    subprocess.run([runner, "blueshift", "synth", "--config", cfg, ck, "--seed", "7"], check=True, capture_output=True)
    vocab = json.load(open(cfg))["vocab_size"]
    tokens = [(i * 37 + 11) % vocab for i in range(24)]
    model = AutoModelForCausalLM.from_pretrained(ck, torch_dtype=torch.float32).eval()
    with torch.no_grad():
        logits = model(torch.tensor([tokens])).logits[0].float().numpy()
    np.save(os.path.join(out, f"{name}.logits.npy"), logits.astype(np.float32))
    json.dump({"tokens": tokens, "seed": 7, "transformers": __import__("transformers").__version__},
              open(os.path.join(out, f"{name}.ref.json"), "w"))
    print(name, logits.shape, float(logits.std()))
