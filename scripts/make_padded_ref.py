#!/usr/bin/env python3
"""A tiny random-weight Gemma 3 whose sizes are not multiples of 256 (hidden 320 as Gemma 3 270M's 640,
q/o width 320, intermediate 448), with float32 reference logits from HF transformers.

Q4_K packs rows in blocks of 256, so DOPPLER's converter pads every row of such a model to whole blocks
(a [448, 320] gate_proj is 448 rows x 2 blocks x 144 B): the model exists to test that layout.
Same recipe as ../shared/tools/make_refs.py (project tooling): random N(0, 0.05) matrices, norms
0.1 * N(0, 1) around 0 so a missing Gemma (1 + w) offset shows, bf16 on disk, float32 eager forward.

Runs where torch + transformers exist (the GPU lease image; no GPU needed):
    python3 scripts/make_padded_ref.py OUT_DIR
writes OUT_DIR/gemma3-pad320/{config.json, generation_config.json, model.safetensors, ref.json,
logits_full.npy}; commit them under tests/model/goldens/gemma3-pad320/."""
import json, os, sys
import numpy as np
import torch
import transformers
from transformers import Gemma3TextConfig, Gemma3ForCausalLM

NAME = "gemma3-pad320"


def build():
    cfg = Gemma3TextConfig(vocab_size=512, hidden_size=320, intermediate_size=448, num_hidden_layers=2,
                           num_attention_heads=5, num_key_value_heads=1, head_dim=64,
                           max_position_embeddings=4096, rms_norm_eps=1e-6, sliding_window=16,
                           query_pre_attn_scalar=64, layer_types=["sliding_attention", "full_attention"],
                           bos_token_id=2, eos_token_id=1, pad_token_id=0)
    rp = getattr(cfg, "rope_parameters", None)
    if isinstance(rp, dict) and "full_attention" in rp:  # transformers 5
        rp["full_attention"]["rope_theta"] = 1000000.0
        rp["sliding_attention"]["rope_theta"] = 10000.0
    cfg._attn_implementation = "eager"
    model = Gemma3ForCausalLM(cfg)
    g = torch.Generator().manual_seed(sum(NAME.encode()))
    with torch.no_grad():
        for pname, p in model.named_parameters():
            p.copy_((0.1 if "norm" in pname else 0.05) * torch.randn(p.shape, generator=g))
    return model.to(torch.bfloat16)


def main():
    out = os.path.join(sys.argv[1], NAME)
    os.makedirs(out, exist_ok=True)
    print("transformers", transformers.__version__, "torch", torch.__version__)
    model = build()
    model.save_pretrained(out, safe_serialization=True)
    ref = model.float().eval()
    vocab = model.config.vocab_size
    rng = np.random.default_rng(len(NAME))
    ids = [model.config.bos_token_id] + rng.integers(3, vocab, size=47).tolist()
    with torch.no_grad():
        logits = ref(torch.tensor([ids])).logits[0].float().numpy()
        prompt = ids[:8]
        gen = ref.generate(torch.tensor([prompt]), max_new_tokens=24, min_new_tokens=24, do_sample=False,
                           eos_token_id=None, pad_token_id=0)
    np.save(os.path.join(out, "logits_full.npy"), logits.astype(np.float32))
    meta = {"name": NAME, "arch": type(model).__name__, "transformers": transformers.__version__,
            "tokens": ids, "prompt": prompt, "greedy": gen[0, len(prompt):].tolist(),
            "logits_shape": list(logits.shape), "top1_full": logits.argmax(-1).tolist(),
            "logit_std": float(logits.std())}
    with open(os.path.join(out, "ref.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(NAME, logits.shape, "std", round(float(logits.std()), 3), "greedy", meta["greedy"][:8])
    print(open(os.path.join(out, "config.json")).read())


main()
