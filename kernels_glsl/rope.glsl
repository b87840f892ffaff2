// RoPE, rotate-half pairing as HF's apply_rotary_pos_emb: the pair (x[i], x[i + d/2]) rotated by the
// angle pos * inv_freq[i], computed in f32 as HF computes it (freqs = pos * inv_freq, then cos/sin).
// One definition for rope.comp and rope_kv.comp, so the two stay bit-identical.
vec2 rope_rotate(float x0, float x1, float pos, float inv_freq) {
  float a = pos * inv_freq;
  float c = cos(a), s = sin(a);
  return vec2(x0 * c - x1 * s, x1 * c + x0 * s);
}
