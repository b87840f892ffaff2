// embed_{f16,q8_0,q4k,q6k}: out[t, :] = W[tokens[t] - token_offset, :] * scale, with repeated tokens,
// odd row counts and widths, a poisoned output, a table split over two bindings (token_offset), and tokens
// read with a stride (TOKEN_STRIDE: serve's batched decode reads them from the sequences' step states).
// Reference: the dequantized rows (rdrr's dequantize_row) times scale, in float64.
#include <gtest/gtest.h>

#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::EmbedParams;

// The GPU decodes each weight with the same f32 operations as the CPU reference, up to FMA
// contraction; 1e-12 allows that and nothing else.
constexpr double kEmbedNmse = 1e-12;

// Bytes of rows [r0, r1) of w, padded to a multiple of 16 (bindings are whole rows, padded; see embed.comp).
std::vector<uint8_t> row_range(const Weights& w, uint32_t r0, uint32_t r1) {
  uint64_t rb = gpu_row_bytes(w.t, w.k);
  std::vector<uint8_t> out(w.bytes.begin() + r0 * rb, w.bytes.begin() + r1 * rb);
  out.resize((out.size() + 15) / 16 * 16, 0);
  return out;
}

class Embed : public KernelTest {
 protected:
  void check(DType t, uint32_t vocab, uint32_t dim, uint32_t n_tokens, uint32_t split, uint32_t stride = 1) {
    Weights w = random_weights(t, vocab, dim);
    std::uniform_int_distribution<int32_t> tok(0, int32_t(vocab) - 1);
    std::vector<int32_t> tokens(n_tokens);
    for (auto& x : tokens) x = tok(rng());
    tokens[n_tokens - 1] = tokens[0];  // a repeated token
    float scale = random_floats(1, 0.5f, 3.0f)[0];
    std::vector<double> ref(size_t(n_tokens) * dim);
    for (uint32_t i = 0; i < n_tokens; ++i)
      for (uint32_t j = 0; j < dim; ++j)
        ref[size_t(i) * dim + j] = double(w.dq[size_t(tokens[i]) * dim + j]) * scale;

    // Token i at word i * stride; the words between hold ids no table has (a row read from one stays poisoned).
    std::vector<int32_t> words(size_t(n_tokens) * stride, 0x7fffffff);
    for (uint32_t i = 0; i < n_tokens; ++i) words[size_t(i) * stride] = tokens[i];
    auto btok = upload(words);
    auto out = poisoned(ref.size() * 4);
    const auto& p = kernels().get("embed_" + kernel_suffix(t), {{0, 64}, {1, stride}});
    // Rows [0, split) in one binding, [split, vocab) in another; split == vocab is one binding.
    auto lo = upload(row_range(w, 0, split));
    run_once(p, {{0, &lo}, {1, &btok}, {2, &out}}, EmbedParams{dim, n_tokens, scale, 0}, n_tokens);
    if (split < vocab) {
      auto hi = upload(row_range(w, split, vocab));
      run_once(p, {{0, &hi}, {1, &btok}, {2, &out}}, EmbedParams{dim, n_tokens, scale, split}, n_tokens);
    }
    auto got = download<float>(out, ref.size());
    EXPECT_LT(nmse(got, ref), kEmbedNmse) << dtype_name(t) << " vocab=" << vocab << " dim=" << dim
                                          << " split=" << split << " seed=" << test_seed();
  }
};

TEST_F(Embed, AllWeightTypes) {
  check(DType::F16, 37, 77, 13, 37);
  check(DType::F16, 41, 130, 9, 20);
  check(DType::Q8_0, 37, 96, 13, 37);
  check(DType::Q8_0, 41, 160, 9, 17);
  check(DType::Q4_K, 37, 768, 13, 37);
  check(DType::Q4_K, 41, 512, 9, 21);
  check(DType::Q4_K, 37, 640, 13, 37);   // rows padded to whole blocks (DOPPLER's "row" layout)
  check(DType::Q4_K, 41, 1152, 9, 21);
  check(DType::Q6_K, 37, 768, 13, 37);
  check(DType::Q6_K, 41, 256, 9, 15);
}

TEST_F(Embed, TokensReadWithAStride) {
  for (uint32_t stride : {64u, 3u}) {
    check(DType::F16, 41, 130, 9, 41, stride);
    check(DType::Q8_0, 41, 160, 9, 17, stride);
    check(DType::Q4_K, 37, 640, 13, 37, stride);
    check(DType::Q6_K, 41, 256, 9, 15, stride);
  }
}

// A token past the table (id >= vocab, which the host rejects before dispatch) writes nothing rather
// than reading outside the binding.
TEST_F(Embed, OutOfRangeTokenLeavesRowUnwritten) {
  Weights w = random_weights(DType::Q8_0, 5, 64);
  std::vector<int32_t> tokens{1, 5, 4, -1};
  auto btok = upload(tokens), table = upload(w.bytes);
  auto out = poisoned(tokens.size() * 64 * 4);
  run_once(kernels().get("embed_q8_0", {{0, 32}}), {{0, &table}, {1, &btok}, {2, &out}},
           EmbedParams{64, uint32_t(tokens.size()), 1.0f, 0}, uint32_t(tokens.size()));
  auto got = download<uint32_t>(out, tokens.size() * 64);
  for (size_t t = 0; t < tokens.size(); ++t) {
    bool valid = tokens[t] >= 0 && tokens[t] < 5;
    for (size_t j = 0; j < 64; ++j) {
      if (valid)
        ASSERT_EQ(bits_to_float(got[t * 64 + j]), w.dq[tokens[t] * 64 + j]) << "token " << t;
      else
        ASSERT_EQ(got[t * 64 + j], 0xffffffffu) << "token " << t << " was written";
    }
  }
}

}  // namespace
}  // namespace bs::testing
