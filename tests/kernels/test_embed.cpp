// embed_{f16,q8_0,q4k,q6k}: out[t, :] = W[tokens[t] - token_offset, :] * scale, with repeated tokens,
// odd row counts and widths, a poisoned output, a table split over two bindings (token_offset), and tokens
// read with a stride (TOKEN_STRIDE: serve's batched decode reads them from the sequences' step states).
// Reference: the dequantized rows (rdrr's dequantize_row) times scale, in float64. Greedy's sampler writes the next
// step's row the same way (sample_parts_embed_*, last test).
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


// sample_parts_embed_<dtype> (sample.comp SAMPLE_EMBED): greedy's sampler picks the token from the argmax keys, then
// writes that token's embedding row times scale into x (binding 12) for the next decode step, as embed.comp would:
// odd widths, a poisoned x, past-the-row x left alone, and a vocabulary whose largest key sits in a later slice. A
// stopped step (state[2] set) writes nothing.
TEST_F(Embed, GreedySamplerWritesTheNextRow) {
  struct C {
    DType t;
    uint32_t vocab, dim;
  };
  for (C c : {C{DType::F16, 4099, 130}, C{DType::Q8_0, 37, 160}, C{DType::Q4_K, 2100, 640}, C{DType::Q6_K, 41, 768}})
    for (bool stopped : {false, true}) {
      Weights w = random_weights(c.t, c.vocab, c.dim);
      const uint32_t slices = (c.vocab + kparams::kArgmaxSliceRows - 1) / kparams::kArgmaxSliceRows;
      const uint32_t want = uint32_t(rng()() % c.vocab);
      // The keys (argmax.glsl): value 2.0 for want, 1.0 for the first id of every other slice.
      const uint32_t stride = kparams::kArgmaxKeyStride;
      std::vector<uint64_t> keys(slices * stride);
      for (uint32_t g = 0; g < slices; ++g) keys[g * stride] = argmax_key_of(1.0f, g * kparams::kArgmaxSliceRows);
      keys[want / kparams::kArgmaxSliceRows * stride] = argmax_key_of(2.0f, want);
      const float scale = random_floats(1, 0.5f, 3.0f)[0];
      auto bkeys = upload(keys), btab = upload(row_range(w, 0, c.vocab)), bx = poisoned((c.dim + 64) * 4);
      auto bst = upload(std::vector<uint32_t>{7, 3, stopped ? 1u : 0u, 0, 0, 0, 0, 0});
      auto bh = upload(std::vector<uint32_t>(8, 0)), bring = upload(std::vector<uint32_t>(18, 0xffffffffu));
      auto beos = upload(std::vector<uint32_t>{c.vocab + 1}), btok = upload(std::vector<uint32_t>{0});
      auto bseen = upload(std::vector<uint32_t>(c.vocab / 32 + 1, 0)), bctl = upload(std::vector<uint32_t>{0});
      struct {
        kparams::SampleParams s;
        EmbedParams e;
      } params{{c.vocab, 0, 0.0f, 1.0f, 0.0f, 1.0f, 0, 0, 100, 1, 0, 16}, {c.dim, 1, scale, 0}};
      const uint32_t wg =
          std::min<uint32_t>({256u, 64u * device().subgroupSize(), device().adapter().max_workgroup_invocations});
      run_once(kernels().get("sample_parts_embed_" + kernel_suffix(c.t), {{0, wg}}),
               {{9, &bkeys}, {1, &bst}, {2, &bh}, {3, &bring}, {4, &beos}, {5, &bseen}, {6, &btok}, {7, &bctl},
                {11, &btab}, {12, &bx}},
               params, 1);
      auto x = download<uint32_t>(bx, c.dim + 64);
      const std::string where = std::string(dtype_name(c.t)) + " vocab=" + std::to_string(c.vocab) + " dim=" +
                                std::to_string(c.dim) + " stopped=" + std::to_string(stopped) + " seed=" +
                                std::to_string(test_seed());
      for (uint32_t i = c.dim; i < c.dim + 64; ++i) ASSERT_EQ(x[i], 0xffffffffu) << "wrote past the row, " << where;
      if (stopped) {
        EXPECT_EQ(std::count(x.begin(), x.end(), 0xffffffffu), long(x.size())) << "a stopped step wrote x, " << where;
        continue;
      }
      EXPECT_EQ(download<uint32_t>(btok, 1)[0], want) << where;
      std::vector<double> ref(c.dim);
      for (uint32_t j = 0; j < c.dim; ++j) ref[j] = double(w.dq[size_t(want) * c.dim + j]) * scale;
      EXPECT_LT(nmse(download<float>(bx, c.dim), ref), kEmbedNmse) << where;
    }
}

}  // namespace
}  // namespace bs::testing
