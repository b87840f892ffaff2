// The decode heads with greedy's argmax folded in (matvec_*_argmax, matvec.glsl MV_ARGMAX): each writes the same
// logits as its plain kernel, bit for bit, and maxes into key g the argmax key (argmax.glsl) of slice g's largest
// logit and the lowest id holding it (rows g * kArgmaxSliceRows ..; key g at 64-bit word g * kArgmaxKeyStride, nothing
// written between). sample_parts then picks torch.argmax's id from
// the keys and leaves them 0 (none) for the next step's head. Ties are made by copying the largest row over earlier
// rows (in the same workgroup and in an earlier slice): the lowest copy must win. Several slices (m > 8 x 512, an
// odd last slice), workgroup sizes of one and several subgroups, 1, 2 and 4 rows a workgroup.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "tests/kernels/kernel_test.h"

namespace bs::testing {
namespace {

using kparams::kArgmaxKeyStride;
using kparams::kArgmaxSliceRows;
using kparams::MatvecParams;

class MatvecArgmax : public KernelTest {
 protected:
  void check(const std::string& kernel, DType t, uint32_t m, uint32_t k) {
    if (!kernels().has(kernel + "_argmax"))
      GTEST_SKIP() << device().adapter().name << " cannot run " << kernel << "_argmax (64-bit atomics or int8 dots)";
    const bool q8 = kernel.find("_i8") != std::string::npos;
    Weights w = random_weights(t, m, k);
    auto x = random_floats(k, -2, 2);
    auto bx = upload(with_nan_tail(x));
    const uint32_t nb = (k + 255) / 256;
    auto bq = poisoned(size_t(nb) * 640 + 256, "x q8");
    if (q8)
      run_once(kernels().get("quantize_x_q8"), {{0, &bx}, {1, &bq}}, MatvecParams{0, k, 1, 0}, (nb * 16 + 63) / 64);
    gpu::Buffer& xin = q8 ? bq : bx;
    const uint32_t slices = (m + kArgmaxSliceRows - 1) / kArgmaxSliceRows;
    const size_t row_bytes = gpu_row_bytes(t, k);
    for (int ties = 0; ties < 2; ++ties)
      for (auto [wg, rows] : {std::pair{32u, 4u}, std::pair{64u, 2u}, std::pair{32u, 1u}}) {
        auto bw = upload(w.bytes);
        auto plain = poisoned(size_t(m) * 4);
        run_once(kernels().get(kernel, {{0, wg}, {1, rows}}), {{0, &bw}, {1, &xin}, {2, &plain}},
                 MatvecParams{m, k, 1, 0}, (m + rows - 1) / rows);
        auto y = download<float>(plain, m);
        if (ties) {  // the largest row copied over the row before it and over one in slice 0
          const uint32_t top = uint32_t(std::max_element(y.begin(), y.end()) - y.begin());
          std::vector<uint8_t> bytes = w.bytes;
          for (uint32_t to : {top > 0 ? top - 1 : top, (top % kArgmaxSliceRows) / 2})
            std::memcpy(bytes.data() + size_t(to) * row_bytes, w.bytes.data() + size_t(top) * row_bytes, row_bytes);
          bw = upload(bytes);
          run_once(kernels().get(kernel, {{0, wg}, {1, rows}}), {{0, &bw}, {1, &xin}, {2, &plain}},
                   MatvecParams{m, k, 1, 0}, (m + rows - 1) / rows);
          y = download<float>(plain, m);
        }
        auto logits = poisoned(size_t(m) * 4), keys = upload(std::vector<uint64_t>(slices * kArgmaxKeyStride, 0));
        run_once(kernels().get(kernel + "_argmax", {{0, wg}, {1, rows}}),
                 {{0, &bw}, {1, &xin}, {2, &logits}, {10, &keys}}, MatvecParams{m, k, 1, 0}, (m + rows - 1) / rows);
        const std::string where = kernel + " m=" + std::to_string(m) + " k=" + std::to_string(k) + " wg=" +
                                  std::to_string(wg) + " rows=" + std::to_string(rows) + " ties=" +
                                  std::to_string(ties) + " seed=" + std::to_string(test_seed());
        auto got = download<float>(logits, m);
        ASSERT_EQ(std::memcmp(got.data(), y.data(), size_t(m) * 4), 0)
            << "logits differ from the plain kernel's, " << where;
        auto kv = download<uint64_t>(keys, slices * kArgmaxKeyStride);
        for (uint32_t g = 0; g < slices; ++g) {
          const uint32_t r0 = g * kArgmaxSliceRows, r1 = std::min(m, r0 + kArgmaxSliceRows);
          const uint32_t best = uint32_t(std::max_element(y.begin() + r0, y.begin() + r1) - y.begin());
          EXPECT_EQ(kv[g * kArgmaxKeyStride], argmax_key_of(y[best], best)) << "slice " << g << ", " << where;
          for (uint32_t j = 1; j < kArgmaxKeyStride; ++j)
            ASSERT_EQ(kv[g * kArgmaxKeyStride + j], 0u) << "wrote between the keys, slice " << g << ", " << where;
        }
        // sample_parts reduces the keys to torch.argmax's id and clears them.
        const uint32_t want = uint32_t(std::max_element(y.begin(), y.end()) - y.begin()), pos = 3, n = 0;
        auto bst = upload(std::vector<uint32_t>{7, pos, 0, n, 0, 0, 0, 0});
        auto bh = upload(std::vector<uint32_t>(pos + 2, 0)), bring = upload(std::vector<uint32_t>(16 + 2, 0xffffffffu));
        auto beos = upload(std::vector<uint32_t>{m + 1}), bseen = upload(std::vector<uint32_t>(m / 32 + 1, 0)),
             btok = upload(std::vector<uint32_t>{0}), bctl = upload(std::vector<uint32_t>{0});
        const uint32_t swg =
            std::min<uint32_t>({256u, 64u * device().subgroupSize(), device().adapter().max_workgroup_invocations});
        run_once(kernels().get("sample_parts", {{0, swg}}),
                 {{9, &keys}, {1, &bst}, {2, &bh}, {3, &bring}, {4, &beos}, {5, &bseen}, {6, &btok}, {7, &bctl}},
                 kparams::SampleParams{m, 0, 0.0f, 1.0f, 0.0f, 1.0f, 0, 0, 100, 1, 0, 16}, 1);
        EXPECT_EQ(download<uint32_t>(bring, 18)[2 + n], want) << where;
        kv = download<uint64_t>(keys, slices * kArgmaxKeyStride);
        EXPECT_EQ(std::count(kv.begin(), kv.end(), 0u), long(kv.size())) << "keys left set, " << where;
      }
  }
};

TEST_F(MatvecArgmax, F16) { check("matvec_f16", DType::F16, 4099, 264); }
TEST_F(MatvecArgmax, Q6KWide) { check("matvec_q6k_wide", DType::Q6_K, 5003, 256); }
TEST_F(MatvecArgmax, Q6KWideInt8) { check("matvec_q6k_wide_i8", DType::Q6_K, 4097, 512); }

}  // namespace
}  // namespace bs::testing
