// GGML types RDRR does not hold (rdrr/gguf_dequant.h): blocks packed here from chosen scales and quants,
// following ggml-common.h's layouts, dequantize to d * scale * q - dmin * min (ggml's f32 order); Q4_0 /
// Q5_0 become Q8_0 with every value unchanged; the others become F16 within f16 rounding, and the import
// says so per tensor and in a summary; IQ types are refused naming the tensor and the type.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

#include "rdrr/gguf.h"
#include "rdrr/gguf_dequant.h"
#include "rdrr/manifest.h"
#include "rdrr/quant.h"
#include "runtime/base/half.h"
#include "sharding/reader.h"
#include "tests/common/testing.h"

namespace {

namespace fs = std::filesystem;
using namespace bs::gguf;
using bs::testing::TempDir;

// One block's worth of chosen parameters and the values ggml's dequantization must give for them.
struct Packed {
  std::vector<uint8_t> bytes;
  std::vector<float> want;
};

void put_f16(std::vector<uint8_t>& b, size_t at, float f) {
  uint16_t h = bs::float_to_half(f);
  std::memcpy(b.data() + at, &h, 2);
}
float f16(float f) { return bs::half_to_float(bs::float_to_half(f)); }

// Q4_0 / Q4_1 / Q5_0 / Q5_1: value j of 32 is quant q[j]: low nibbles hold j < 16, high nibbles j >= 16;
// the fifth bit of value j is bit j of the u32 qh.
Packed pack_legacy(GgmlType t, std::mt19937& r) {
  const bool five = t == GgmlType::Q5_0 || t == GgmlType::Q5_1,
             has_min = t == GgmlType::Q4_1 || t == GgmlType::Q5_1;
  Packed p;
  p.bytes.assign(ggml_traits(t)->block_bytes, 0);
  const float d = f16(0.01f + float(r() % 100) / 1000), m = has_min ? f16(-0.3f + float(r() % 50) / 100) : 0;
  put_f16(p.bytes, 0, d);
  if (has_min) put_f16(p.bytes, 2, m);
  uint8_t* qs = p.bytes.data() + (has_min ? 4 : 2) + (five ? 4 : 0);
  uint32_t qh = 0;
  for (int j = 0; j < 32; ++j) {
    int q = int(r() % (five ? 32 : 16));
    qs[j % 16] |= uint8_t((q & 0xF) << (j < 16 ? 0 : 4));
    if (five && (q & 16)) qh |= 1u << j;
    float v = float(has_min ? q : q - (five ? 16 : 8));
    p.want.push_back(has_min ? v * d + m : v * d);
  }
  if (five) std::memcpy(p.bytes.data() + (has_min ? 4 : 2), &qh, 4);
  return p;
}

// Q2_K and Q3_K: 256 values in two halves of 128; in a half, value (j, h, l) — 2-bit plane j (bits 2j of
// the bytes), half h of 16-value groups, index l — is byte l + 16h of the half's 32 quant bytes and uses
// scale 8 * half + 2j + h.
int k_scale_index(int p) { return (p / 128) * 8 + ((p % 128) / 32) * 2 + (p % 32) / 16; }
int k_byte(int p) { return (p / 128) * 32 + (p % 32); }
int k_plane(int p) { return (p % 128) / 32; }

Packed pack_q2k(std::mt19937& r) {
  Packed p;
  p.bytes.assign(84, 0);
  const float d = f16(0.02f + float(r() % 50) / 1000), dmin = f16(0.01f + float(r() % 50) / 1000);
  put_f16(p.bytes, 80, d);
  put_f16(p.bytes, 82, dmin);
  for (int s = 0; s < 16; ++s) p.bytes[size_t(s)] = uint8_t(r() % 256);  // low nibble scale, high nibble min
  for (int i = 0; i < 256; ++i) {
    int q = int(r() % 4), s = k_scale_index(i);
    p.bytes[size_t(16 + k_byte(i))] |= uint8_t(q << (2 * k_plane(i)));
    const float dl = d * float(p.bytes[size_t(s)] & 0xF), ml = dmin * float(p.bytes[size_t(s)] >> 4);
    p.want.push_back(dl * float(q) - ml);
  }
  return p;
}

// Q3_K: quant = low 2 bits - (hmask bit set ? 0 : 4); hmask bit (4 * half + plane) of byte l + 16h. Scales
// are 6-bit (stored + 32): low nibbles of scales 0..7 in bytes 0..7, of 8..15 in the high nibbles of bytes
// 0..7; the top 2 bits of scale i in bits 2 * (i / 4) of byte 8 + i % 4.
Packed pack_q3k(std::mt19937& r) {
  Packed p;
  p.bytes.assign(110, 0);
  const float d = f16(0.01f + float(r() % 50) / 1000);
  put_f16(p.bytes, 108, d);
  int sc[16];
  for (int i = 0; i < 16; ++i) {
    sc[i] = int(r() % 64);
    p.bytes[size_t(96 + i % 8)] |= uint8_t((sc[i] & 0xF) << (i < 8 ? 0 : 4));
    p.bytes[size_t(96 + 8 + i % 4)] |= uint8_t((sc[i] >> 4) << (2 * (i / 4)));
  }
  for (int i = 0; i < 256; ++i) {
    int low = int(r() % 4);
    bool high = r() % 2;
    p.bytes[size_t(32 + k_byte(i))] |= uint8_t(low << (2 * k_plane(i)));
    if (high) p.bytes[size_t(i % 32)] |= uint8_t(1 << ((i / 128) * 4 + k_plane(i)));
    const float dl = d * float(sc[k_scale_index(i)] - 32);
    p.want.push_back(dl * float(low - (high ? 0 : 4)));
  }
  return p;
}

// Q5_K: 8 sub-blocks of 32 with 6-bit scales and mins (sub-block s < 4: bytes s and s + 4, low 6 bits;
// s >= 4: low nibbles in byte s + 4, top 2 bits in the top of bytes s - 4 and s); value i of chunk c = i / 64
// is the low (i % 64 < 32) or high nibble of byte 32c + i % 32 plus bit 2c (or 2c + 1) of qh[i % 32].
Packed pack_q5k(std::mt19937& r) {
  Packed p;
  p.bytes.assign(176, 0);
  const float d = f16(0.01f + float(r() % 50) / 1000), dmin = f16(0.01f + float(r() % 50) / 1000);
  put_f16(p.bytes, 0, d);
  put_f16(p.bytes, 2, dmin);
  uint8_t* sb = p.bytes.data() + 4;
  int sc[8], mn[8];
  for (int s = 0; s < 8; ++s) {
    sc[s] = int(r() % 64);
    mn[s] = int(r() % 64);
    if (s < 4) {
      sb[s] |= uint8_t(sc[s]);
      sb[s + 4] |= uint8_t(mn[s]);
    } else {
      sb[s + 4] = uint8_t((sc[s] & 0xF) | ((mn[s] & 0xF) << 4));
      sb[s - 4] |= uint8_t((sc[s] >> 4) << 6);
      sb[s] |= uint8_t((mn[s] >> 4) << 6);
    }
  }
  for (int i = 0; i < 256; ++i) {
    const int c = i / 64, second = (i % 64) >= 32, l = i % 32, s = 2 * c + second, q = int(r() % 32);
    p.bytes[size_t(48 + 32 * c + l)] |= uint8_t((q & 0xF) << (second ? 4 : 0));
    if (q & 16) p.bytes[size_t(16 + l)] |= uint8_t(1 << (2 * c + second));
    const float dl = d * float(sc[s]), ml = dmin * float(mn[s]);
    p.want.push_back(dl * float(q) - ml);
  }
  return p;
}

Packed pack(GgmlType t, std::mt19937& r) {
  switch (t) {
    case GgmlType::Q2_K:
      return pack_q2k(r);
    case GgmlType::Q3_K:
      return pack_q3k(r);
    case GgmlType::Q5_K:
      return pack_q5k(r);
    default:
      return pack_legacy(t, r);
  }
}

// `blocks` packed blocks of `t`, concatenated.
Packed pack_blocks(GgmlType t, int blocks, std::mt19937& r) {
  Packed all;
  for (int i = 0; i < blocks; ++i) {
    Packed b = pack(t, r);
    all.bytes.insert(all.bytes.end(), b.bytes.begin(), b.bytes.end());
    all.want.insert(all.want.end(), b.want.begin(), b.want.end());
  }
  return all;
}

constexpr GgmlType kConverted[] = {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                                   GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q5_K};

TEST(GgufDequant, BlocksDecodeToTheirScalesAndQuants) {
  std::mt19937 r(std::random_device{}());
  for (GgmlType t : kConverted) {
    SCOPED_TRACE(std::string(ggml_traits(t)->name));
    Packed p = pack_blocks(t, 3, r);
    std::vector<float> got(p.want.size(), std::nanf(""));  // poisoned
    dequantize_ggml(t, reinterpret_cast<const std::byte*>(p.bytes.data()), got.data(), got.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], p.want[i]) << "value " << i;
  }
}

TEST(GgufDequant, ConversionsKeepValuesOrStateTheirRounding) {
  std::mt19937 r(std::random_device{}());
  for (GgmlType t : kConverted) {
    SCOPED_TRACE(std::string(ggml_traits(t)->name));
    Packed p = pack_blocks(t, 2, r);
    std::vector<std::byte> out = {std::byte{0x5A}};  // appended after what is there
    auto loss = convert_blocks(t, std::as_bytes(std::span(p.bytes)), p.want.size(), out);
    const bs::DType to = *converted_dtype(t);
    ASSERT_EQ(out.size() - 1, *bs::row_bytes(to, p.want.size()));
    std::vector<float> back(p.want.size());
    bs::dequantize_row(to, out.data() + 1, back.data(), int64_t(back.size()));
    double worst = 0, max_abs = 0;
    for (size_t i = 0; i < back.size(); ++i) {
      worst = std::max(worst, std::abs(double(back[i]) - p.want[i]));
      max_abs = std::max(max_abs, std::abs(double(p.want[i])));
      if (to == bs::DType::Q8_0)
        ASSERT_EQ(back[i], p.want[i]) << "value " << i;  // exact
      else
        ASSERT_EQ(back[i], f16(p.want[i])) << "value " << i;  // the nearest f16
    }
    EXPECT_EQ(to, t == GgmlType::Q4_0 || t == GgmlType::Q5_0 ? bs::DType::Q8_0 : bs::DType::F16);
    EXPECT_EQ(loss.max_abs_error, worst);
    EXPECT_EQ(loss.max_abs, to == bs::DType::Q8_0 ? 0.0 : max_abs);
  }
  for (GgmlType t : {GgmlType::IQ2_XXS, GgmlType::IQ4_XS, GgmlType::Q8_1, GgmlType::TQ2_0, GgmlType::MXFP4})
    EXPECT_FALSE(converted_dtype(t)) << ggml_traits(t)->name;
}

// A llama GGUF whose seven matrices use the seven converted types imports: Q8_0 where exact, F16 otherwise,
// every stored value as ggml decodes the file's, the loss stated, and the model runs. An IQ2_XXS matrix is
// refused naming the tensor and the type.
TEST(GgufDequant, ImportConvertsEachTypeAndRefusesIq) {
  TempDir d;
  std::mt19937 r(7);
  struct T {
    std::string name;
    std::vector<uint64_t> ne;
    GgmlType type;
  };
  const std::vector<T> tensors = {{"token_embd.weight", {256, 64}, GgmlType::Q5_K},
                                  {"blk.0.attn_norm.weight", {256}, GgmlType::F32},
                                  {"blk.0.attn_q.weight", {256, 256}, GgmlType::Q4_0},
                                  {"blk.0.attn_k.weight", {256, 128}, GgmlType::Q5_0},
                                  {"blk.0.attn_v.weight", {256, 128}, GgmlType::Q4_1},
                                  {"blk.0.attn_output.weight", {256, 256}, GgmlType::Q5_1},
                                  {"blk.0.ffn_norm.weight", {256}, GgmlType::F32},
                                  {"blk.0.ffn_gate.weight", {256, 256}, GgmlType::Q2_K},
                                  {"blk.0.ffn_up.weight", {256, 256}, GgmlType::Q3_K},
                                  {"blk.0.ffn_down.weight", {256, 256}, GgmlType::Q5_K},
                                  {"output_norm.weight", {256}, GgmlType::F32}};
  auto write = [&](const fs::path& file, const std::vector<T>& ts) {
    std::map<std::string, std::vector<float>> want;
    Writer w(file.string());
    w.add("general.architecture", Value::str("qwen2"));  // no q/k permutation, so rows stay where they are
    for (auto [k, v] : {std::pair{"block_count", 1},
                        {"embedding_length", 256},
                        {"feed_forward_length", 256},
                        {"attention.head_count", 4},
                        {"attention.head_count_kv", 2},
                        {"context_length", 256}})
      w.add("qwen2." + std::string(k), Value::u32(uint32_t(v)));
    w.add("qwen2.attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
    for (const auto& t : ts) w.add_tensor(t.name, t.ne, t.type);
    w.add_tensor("blk.0.attn_q.bias", {256}, GgmlType::F32);
    w.add_tensor("blk.0.attn_k.bias", {128}, GgmlType::F32);
    w.add_tensor("blk.0.attn_v.bias", {128}, GgmlType::F32);
    w.write_header();
    for (const auto& t : w.tensors()) {
      const uint64_t n = t.ne.size() == 1 ? t.ne[0] : t.ne[0] * t.ne[1];
      if (t.type == GgmlType::F32) {
        std::vector<float> f(n, 1.0f);
        w.write_tensor(std::as_bytes(std::span(f)));
      } else {
        Packed p = pack_blocks(t.type, int(n / ggml_traits(t.type)->block_elems), r);
        w.write_tensor(std::as_bytes(std::span(p.bytes)));
        want[t.name] = p.want;
      }
    }
    w.finish();
    return want;
  };
  auto want = write(d / "mixed.gguf", tensors);
  auto res = bs::testing::run_blueshift({"convert", (d / "mixed.gguf").string(), (d / "out").string()});
  ASSERT_EQ(res.exit_code, 0) << res.err;
  EXPECT_NE(res.err.find("2 tensors Q5_K -> F16 (dequantized; f16 rounding: worst"), std::string::npos)
      << res.err;
  EXPECT_NE(res.err.find("1 tensor Q4_0 -> Q8_0 (exact"), std::string::npos) << res.err;
  auto m = bs::read_manifest(d / "out");
  const std::map<std::string, std::string> internal = {{"token_embd.weight", "embed"},
                                                       {"blk.0.attn_q.weight", "blk.0.attn_q"},
                                                       {"blk.0.attn_k.weight", "blk.0.attn_k"},
                                                       {"blk.0.attn_v.weight", "blk.0.attn_v"},
                                                       {"blk.0.attn_output.weight", "blk.0.attn_out"},
                                                       {"blk.0.ffn_gate.weight", "blk.0.ffn_gate"},
                                                       {"blk.0.ffn_up.weight", "blk.0.ffn_up"},
                                                       {"blk.0.ffn_down.weight", "blk.0.ffn_down"}};
  std::map<std::string, std::vector<float>> got;
  bs::load_tensors(m, d / "out", {}, [&](const bs::TensorEntry& t, std::span<const std::byte> b) {
    std::vector<float> f(size_t(t.shape[0] * (t.shape.size() > 1 ? t.shape[1] : 1)));
    bs::dequantize_row(t.dtype, b.data(), f.data(), int64_t(f.size()));
    got[t.internal] = f;
  });
  for (const auto& t : tensors) {
    if (t.type == GgmlType::F32) continue;
    SCOPED_TRACE(t.name);
    const bs::TensorEntry* e = m.find(internal.at(t.name));
    ASSERT_TRUE(e);
    const bool exact = t.type == GgmlType::Q4_0 || t.type == GgmlType::Q5_0;
    EXPECT_EQ(e->dtype, exact ? bs::DType::Q8_0 : bs::DType::F16);
    EXPECT_EQ(e->source_dtype, std::string(ggml_traits(t.type)->name));
    EXPECT_NE(e->fallback.find(exact ? "(exact)" : "f16 rounding changed values by at most"),
              std::string::npos)
        << e->fallback;
    const auto& g = got.at(e->internal);
    const auto& w = want.at(t.name);
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], exact ? w[i] : f16(w[i])) << i;
  }
  res = bs::testing::run_blueshift(
      {"logits", "--model", (d / "out").string(), "--tokens", "1,2,3", "--out", (d / "l.npy").string()});
  EXPECT_EQ(res.exit_code, 0) << res.err;

  auto iq = tensors;
  iq[7] = {"blk.0.ffn_gate.weight", {256, 256}, GgmlType::IQ2_XXS};
  {
    Writer w((d / "iq.gguf").string());
    w.add("general.architecture", Value::str("qwen2"));
    w.add("qwen2.block_count", Value::u32(1));
    w.add("qwen2.embedding_length", Value::u32(256));
    w.add("qwen2.feed_forward_length", Value::u32(256));
    w.add("qwen2.attention.head_count", Value::u32(4));
    w.add("qwen2.attention.head_count_kv", Value::u32(2));
    w.add("qwen2.attention.layer_norm_rms_epsilon", Value::f32(1e-5f));
    for (const auto& t : iq) w.add_tensor(t.name, t.ne, t.type);
    for (auto [b, n] :
         {std::pair{"blk.0.attn_q.bias", 256u}, {"blk.0.attn_k.bias", 128u}, {"blk.0.attn_v.bias", 128u}})
      w.add_tensor(b, {n}, GgmlType::F32);
    w.write_header();
    for (const auto& t : w.tensors()) w.write_tensor(std::vector<std::byte>(t.size));
    w.finish();
  }
  res = bs::testing::run_blueshift({"convert", (d / "iq.gguf").string(), (d / "iq").string()});
  EXPECT_EQ(res.exit_code, 3) << res.err;
  EXPECT_NE(res.err.find("tensor 'blk.0.ffn_gate.weight': type IQ2_XXS is not imported"), std::string::npos)
      << res.err;
  EXPECT_FALSE(fs::exists(d / "iq"));
}

}  // namespace
