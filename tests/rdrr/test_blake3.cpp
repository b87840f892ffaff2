// BLAKE3 against the official test vectors (BLAKE3-team/BLAKE3 test_vectors/test_vectors.json, version
// 1.8.6: the default-mode `hash` field, of which the first 32 bytes are the default output), with every
// SIMD kernel the CPU has, one-shot, threaded and incremental in odd piece sizes.
#include <gtest/gtest.h>

#include <random>

#include "sharding/blake3.h"
#include "sharding/hash.h"

using namespace bs;

namespace {

struct Vector {
  size_t input_len;
  const char* hash;  // first 32 bytes of the extended output, hex
};

// The input of each case is the repeating byte sequence 0, 1, ..., 250, 0, 1, ...
const Vector kVectors[] = {
    {0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
    {1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"},
    {2, "7b7015bb92cf0b318037702a6cdd81dee41224f734684c2c122cd6359cb1ee63"},
    {3, "e1be4d7a8ab5560aa4199eea339849ba8e293d55ca0a81006726d184519e647f"},
    {4, "f30f5ab28fe047904037f77b6da4fea1e27241c5d132638d8bedce9d40494f32"},
    {5, "b40b44dfd97e7a84a996a91af8b85188c66c126940ba7aad2e7ae6b385402aa2"},
    {6, "06c4e8ffb6872fad96f9aaca5eee1553eb62aed0ad7198cef42e87f6a616c844"},
    {7, "3f8770f387faad08faa9d8414e9f449ac68e6ff0417f673f602a646a891419fe"},
    {8, "2351207d04fc16ade43ccab08600939c7c1fa70a5c0aaca76063d04c3228eaeb"},
    {63, "e9bc37a594daad83be9470df7f7b3798297c3d834ce80ba85d6e207627b7db7b"},
    {64, "4eed7141ea4a5cd4b788606bd23f46e212af9cacebacdc7d1f4c6dc7f2511b98"},
    {65, "de1e5fa0be70df6d2be8fffd0e99ceaa8eb6e8c93a63f2d8d1c30ecb6b263dee"},
    {127, "d81293fda863f008c09e92fc382a81f5a0b4a1251cba1634016a0f86a6bd640d"},
    {128, "f17e570564b26578c33bb7f44643f539624b05df1a76c81f30acd548c44b45ef"},
    {129, "683aaae9f3c5ba37eaaf072aed0f9e30bac0865137bae68b1fde4ca2aebdcb12"},
    {1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
    {1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
    {1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"},
    {2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"},
    {2049, "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"},
    {3072, "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2"},
    {3073, "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3"},
    {4096, "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969"},
    {4097, "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"},
    {5120, "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833"},
    {5121, "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff"},
    {6144, "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205"},
    {6145, "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f"},
    {7168, "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a"},
    {7169, "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"},
    {8192, "aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a63"},
    {8193, "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b"},
    {16384, "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4"},
    {31744, "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47"},
    {102400, "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"},
};

// DOPPLER's "blake3" of the same inputs, as printed by its own code (doppler-gpu 0.5.1, whose
// src/storage/blake3.js is unchanged at DOPPLER's HEAD) through
//   node tests/rdrr/doppler_blake3_vectors.mjs .../node_modules/doppler-gpu/src/storage/blake3.js
const Vector kDopplerVectors[] = {
    {0, "fda1200e7626ed65703a9c8eb28987d8142bf29fcf7cf582e0c44cc7ad8a8ea8"},
    {1, "1103c1e16280c2008da4b71450ad5ad844b71a5e09df9c1948dfb83f4a77e0d9"},
    {2, "f668e7802e75ad7efd82491513da367bbe6234e635420cbc9bb019742d67500f"},
    {3, "1cbf6cd5693229f7ce5a8ce5da31e2a9ea192812bbf79a343da5354a44f7940b"},
    {63, "04945a4d1882b21682e02a401f75b06487ae3cce3efd7fdf6543bf4d5e47c8a3"},
    {64, "69d0b52250aa4e600687b20755fea4ba76a9fc25490d015d33ded4c09f9e348a"},
    {65, "b5ef4905c6aa739c7c0573dc76813e0b6ef2da83aafbc212bb4e30181783671f"},
    {127, "1dfabcc812671a3b6143182be9f1a16c7aa357f896d222280922eabca108861c"},
    {128, "07b4b859b2e37cedee6d417a48f61d86b52830e3dc6242a31e98a648d4d5a4d3"},
    {129, "fa1dd0bf14e955c4630e81fe813837817443aec22d11eea5949be69c4c7026a9"},
    {1023, "5a8ef1b30754857dd8b96ef4b49a808271a0c1bc31fb502c0c99c0973f89ec31"},
    {1024, "720a04b59cf6a8b148ca1f6ef8a3b2168077f2baf111197742bc6b17e2dbc694"},
    {1025, "b74c0de1b15fd2449d0ca9d16e22a356275308cc3ca15c34659c6773168a5179"},
    {2048, "64ed429b3b87910734e0320f42b34e8fd854a41920f4cc9ea1e24a2d35d92293"},
    {2049, "3c83e087ee55b9851dcab0d9a59f747d1e9720fdbbbd7f0e305a7384f0861026"},
    {3072, "bf894de697d5bd05f88aff863f6390ea42cb3e9af3754a4b8e3429ce2784f6e8"},
    {3073, "e503b45df53e8819cb6c7a3052889aceb321a5f52af45194fbaccee83dd53213"},
    {4096, "3c76bea1bf194d115420090375be1b865c357afa417d13109e737cbdbe986548"},
    {4097, "546f46a0dcc0789bb8774ba4a582b5c332e8d87b702b8c49f3a1fbf8ed8721e5"},
    {5120, "f8c354fb9980db218c9117b1dcda483f0cee92b52a65f1ab6b32227ec251207e"},
    {5121, "efeac9abe4808640eeca84e814b33f897974dc4166acb63a04875ac710a4436b"},
    {8192, "07f26898459b8000fead6747f53b07c3a09051deae28f3182820052ce2fd9596"},
    {8193, "b43d3d3b9b3f93b20d51238c9c614c82dd8f795f80f9745975ae1b55ea06417b"},
    {16384, "d02edaf1b7bdb0fbb968a31150d0cc80f784b14b9f6f449bdd11d9e1489e738d"},
    {31744, "f83341760484108d5e67b0778d4ff468e4c6a3a17876cf7b27a0a952725ee232"},
    {65536, "ea7c8530499c2794adde9c51055956338e7bef1a4b771cc71ebb27a026d323f0"},
    {65537, "f2ba845463d84fd1fd1cb2ab709511e072bf503fecbb2bb87643f9956f921277"},
    {102400, "670bc3a6daff417df3b8ceec172e14fa61ece7f3b93145e6c6f8d679ae8d6f52"},
    {262144, "ebe8f1bd9110206c04e71f5c7990e16ce2c6d64085bc0f85ea0b49c40db39014"},
    {1048576, "78f3efe18baddcdbc1e2aa6fd2e5de31dc98be505cdb0dcf1473c84c1b214f79"},
    {1049601, "52a50ab1b3575b352a3af094eaeac9a60ff60e355d216eef7e0f6cc3459eecbb"},
    {4194305, "3dfb9bdea07a8e3f6f8bee16f239c1a24b90b48d8882f256080e01133cdd56b1"},
};

std::vector<std::byte> vector_input(size_t n) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::byte(i % 251);
  return v;
}

std::vector<std::byte> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = std::byte(rng());
  return v;
}

std::string hex(const Blake3Digest& d) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t c : d) {
    s += kHex[c >> 4];
    s += kHex[c & 15];
  }
  return s;
}

// Runs the body once per kernel the CPU has, and restores the default.
template <class F>
void for_each_kernel(F body) {
  for (Blake3Kernel k : blake3_kernels_available()) {
    SCOPED_TRACE(std::string("kernel ") + std::string(blake3_kernel_name(k)));
    blake3_force_kernel(k);
    body();
  }
  blake3_reset_kernel();
}

}  // namespace

TEST(Blake3, OfficialVectorsOneShot) {
  for_each_kernel([] {
    for (auto& v : kVectors)
      EXPECT_EQ(hex(blake3(vector_input(v.input_len))), v.hash) << "length " << v.input_len;
  });
}

TEST(Blake3, OfficialVectorsIncremental) {
  for_each_kernel([] {
    for (auto& v : kVectors) {
      auto in = vector_input(v.input_len);
      for (size_t piece : {1u, 7u, 63u, 64u, 65u, 1000u, 1024u, 1025u, 4097u, 70000u}) {
        Blake3Hasher h;
        for (size_t off = 0; off < in.size(); off += piece)
          h.update(std::span<const std::byte>(in).subspan(off, std::min(piece, in.size() - off)));
        EXPECT_EQ(hex(h.finalize()), v.hash) << "length " << v.input_len << " in pieces of " << piece;
      }
    }
  });
}

TEST(Blake3, DopplerVariantVectors) {
  for_each_kernel([] {
    for (auto& v : kDopplerVectors) {
      auto in = vector_input(v.input_len);
      EXPECT_EQ(hex(blake3_doppler(in)), v.hash) << "length " << v.input_len;
      EXPECT_EQ(hex(blake3(in, 1, Blake3Variant::doppler)), v.hash) << "length " << v.input_len;
      if (v.input_len >= (4 << 20)) {
        EXPECT_EQ(hex(blake3_doppler(in, 2)), v.hash) << "2 threads";
      }
      EXPECT_NE(hex(blake3(in)), v.hash) << "spec BLAKE3 equals DOPPLER's at length " << v.input_len;
    }
  });
  for (auto& v : kDopplerVectors) {
    auto in = vector_input(v.input_len);
    for (size_t piece : {1u, 63u, 64u, 1000u, 1025u, 70000u}) {
      if (piece == 1 && in.size() > 100000) continue;  // a byte at a time: slow and says nothing new
      Blake3Hasher h(Blake3Variant::doppler);
      for (size_t off = 0; off < in.size(); off += piece)
        h.update(std::span<const std::byte>(in).subspan(off, std::min(piece, in.size() - off)));
      EXPECT_EQ(hex(h.finalize()), v.hash) << "length " << v.input_len << " in pieces of " << piece;
    }
  }
}

TEST(Blake3, HashHexDispatchesOnTheAlgorithm) {
  auto in = vector_input(1025);
  EXPECT_EQ(blake3_hex(in), kVectors[17].hash);
  ASSERT_EQ(kVectors[17].input_len, 1025u);
  EXPECT_EQ(hash_hex(HashAlgorithm::blake3, in), blake3_hex(in));
  EXPECT_EQ(hash_hex(HashAlgorithm::sha256, in), sha256_hex(in));
  EXPECT_EQ(parse_hash_algorithm("blake3"), HashAlgorithm::blake3);
  EXPECT_EQ(parse_hash_algorithm("BLAKE3"), std::nullopt);
  EXPECT_EQ(hash_algorithm_name(HashAlgorithm::blake3), "blake3");
}

TEST(Blake3, KernelsAndThreadsAgreeOnRandomInputs) {
  // Sizes around chunk, batch (4/8/16 chunks) and tree boundaries, and a few MiB for the threaded path.
  const size_t sizes[] = {
      0,        1,         64,        1024,          1025,          3 * 1024 + 5, 4096,
      8 * 1024, 15 * 1024, 16 * 1024, 17 * 1024 + 1, 65 * 1024 - 1, 100000,       (5 << 20) + 123};
  for (size_t n : sizes) {
    auto in = random_bytes(n, uint32_t(n));
    for (Blake3Variant var : {Blake3Variant::spec, Blake3Variant::doppler}) {
      SCOPED_TRACE(var == Blake3Variant::spec ? "spec" : "doppler");
      blake3_force_kernel(Blake3Kernel::portable);
      const Blake3Digest want = blake3(in, 1, var);
      Blake3Hasher h(var);
      h.update(in);
      EXPECT_EQ(h.finalize(), want) << n;
      for (Blake3Kernel k : blake3_kernels_available()) {
        blake3_force_kernel(k);
        for (int threads : {1, 2, 3})
          EXPECT_EQ(blake3(in, threads, var), want)
              << n << " " << blake3_kernel_name(k) << " threads " << threads;
      }
      blake3_reset_kernel();
    }
  }
}

TEST(Blake3, OneFlippedBitChangesTheHash) {
  auto in = random_bytes(10000, 5);
  const Blake3Digest a = blake3(in);
  in[9999] ^= std::byte{1};
  EXPECT_NE(blake3(in), a);
}
