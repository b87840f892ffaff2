// short_conv_f32 (LFM2's gated short convolution): y = C * causal depthwise conv(B * x), and the
// rolling conv state it leaves. Odd channel counts (a partly empty last workgroup), kernels of 2 to 17
// taps (17: the state fills a whole 16-row block), chunks shorter and longer than the state and than a
// block, a new sequence (state.pos 0: the old state must not
// leak in) and a continuation (state.pos > 0). Reference: float64 over the same f32 inputs. The WGSL
// twin (kernels_glsl/wgsl/short_conv.wgsl, `--kernels wgsl`) runs the same cases.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/gpu/gpu_test.h"

namespace bs::testing {
namespace {

using kparams::ShortConvParams;

class ShortConv : public GpuTest {
 protected:
  static gpu::KernelCache& wgsl_kernels() {
    static gpu::KernelCache k(device(), gpu::KernelSource::wgsl);
    return k;
  }
  // One chunk of `rows` at position `pos`, from a random previous state.
  void check(gpu::KernelCache& set, uint32_t rows, uint32_t dim, uint32_t kernel, uint32_t pos) {
    const uint32_t hist = kernel - 1;
    auto bcx = random_floats(size_t(rows) * 3 * dim, -2, 2);
    auto w = random_floats(size_t(dim) * kernel);
    auto cs = random_floats(size_t(hist) * dim);  // a new sequence (pos 0) must ignore these
    // Conv inputs in double: the state's rows (or zeros), then this chunk's B * x.
    std::vector<double> in(size_t(hist + rows) * dim);
    for (uint32_t j = 0; j < hist; ++j)
      for (uint32_t c = 0; c < dim; ++c) in[size_t(j) * dim + c] = pos == 0 ? 0.0 : cs[size_t(j) * dim + c];
    for (uint32_t t = 0; t < rows; ++t)
      for (uint32_t c = 0; c < dim; ++c)
        in[size_t(hist + t) * dim + c] = double(bcx[size_t(t) * 3 * dim + c]) * bcx[size_t(t) * 3 * dim + 2 * dim + c];
    std::vector<double> want(size_t(rows) * dim), want_state(size_t(hist) * dim);
    for (uint32_t t = 0; t < rows; ++t)
      for (uint32_t c = 0; c < dim; ++c) {
        double acc = 0;
        for (uint32_t k = 0; k < kernel; ++k) acc += double(w[size_t(c) * kernel + k]) * in[size_t(t + k) * dim + c];
        want[size_t(t) * dim + c] = bcx[size_t(t) * 3 * dim + dim + c] * acc;
      }
    for (uint32_t j = 0; j < hist; ++j)
      for (uint32_t c = 0; c < dim; ++c) want_state[size_t(j) * dim + c] = in[size_t(rows + j) * dim + c];

    uint32_t st[16] = {7, pos};
    auto bb = upload(bcx), bw = upload(w), bc = upload(cs), bs = upload(std::vector<uint32_t>(st, st + 16));
    auto by = poisoned(want.size() * 4);
    run_once(set.get("short_conv_f32"), {{0, &bb}, {1, &bw}, {2, &bc}, {3, &bs}, {4, &by}},
             ShortConvParams{rows, dim, kernel, 0}, (dim + 63) / 64, (rows + 15) / 16);
    std::string where = fmt::format("{} rows={} dim={} kernel={} pos={} seed={}", &set == &kernels() ? "glsl" : "wgsl",
                                    rows, dim, kernel, pos, test_seed());
    EXPECT_LT(nmse(download<float>(by, want.size()), want), 1e-12) << where;
    EXPECT_LT(nmse(download<float>(bc, want_state.size()), want_state), 1e-14) << where << " (state)";
  }
};

TEST_F(ShortConv, PrefillAndDecodeChunks) {
  for (gpu::KernelCache* set : {&kernels(), &wgsl_kernels()}) {
    for (uint32_t kernel : {2u, 3u, 5u, 17u})
      for (uint32_t rows : {1u, 2u, 7u, 16u, 33u})
        for (uint32_t pos : {0u, 5u}) check(*set, rows, 37, kernel, pos);
    check(*set, 3, 130, 3, 0);
    check(*set, 1, 2049, 3, 9);
  }
}

// A sequence fed in pieces (prefill chunks, then single decode steps) equals the whole sequence at once:
// the state carries exactly what the next chunk's conv looks back at.
TEST_F(ShortConv, ChunksEqualOneForward) {
  const uint32_t dim = 45, kernel = 3, n = 11, n2 = 40;
  auto bcx = random_floats(size_t(n2) * 3 * dim, -2, 2);
  auto w = random_floats(size_t(dim) * kernel);
  auto run = [&](std::vector<uint32_t> pieces) {
    auto bw = upload(w), bc = poisoned(size_t(kernel - 1) * dim * 4);  // pos 0 must not read the poison
    std::vector<float> out;
    uint32_t pos = 0;
    for (uint32_t m : pieces) {
      std::vector<float> part(bcx.begin() + size_t(pos) * 3 * dim, bcx.begin() + size_t(pos + m) * 3 * dim);
      uint32_t st[16] = {0, pos};
      auto bb = upload(part), bs = upload(std::vector<uint32_t>(st, st + 16)), by = poisoned(size_t(m) * dim * 4);
      run_once(kernels().get("short_conv_f32"), {{0, &bb}, {1, &bw}, {2, &bc}, {3, &bs}, {4, &by}},
               ShortConvParams{m, dim, kernel, 0}, (dim + 63) / 64, (m + 15) / 16);
      auto y = download<float>(by, size_t(m) * dim);
      out.insert(out.end(), y.begin(), y.end());
      pos += m;
    }
    return out;
  };
  auto whole = run({n});
  auto pieces = run({4, 1, 1, 3, 1, 1});
  ASSERT_EQ(whole.size(), pieces.size());
  for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], pieces[i]) << "at " << i;
  whole = run({n2});
  pieces = run({18, 1, 17, 1, 1, 2});
  ASSERT_EQ(whole.size(), pieces.size());
  for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(whole[i], pieces[i]) << "at " << i;
}

}  // namespace
}  // namespace bs::testing
