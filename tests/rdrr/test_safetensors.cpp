#include <gtest/gtest.h>

#include "rdrr/safetensors.h"
#include "runtime/base/error.h"
#include "tests/common/testing.h"
#include "tests/rdrr/st_builder.h"

using namespace bs;
using namespace bs::testing;
using nlohmann::json;

namespace {

std::vector<uint8_t> random_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = uint8_t(rng()());
  return v;
}

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// Expects parse to throw bs::Error whose message contains `needle`.
void expect_reject(const std::string& file, const std::string& needle) {
  try {
    parse_safetensors_header(as_bytes(file), "x.safetensors");
    ADD_FAILURE() << "accepted a malformed file; expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x.safetensors"), std::string::npos) << e.what();
  }
}

std::string header_file(const json& h, size_t data_bytes) {
  return st_file_from_header(h.dump(), std::vector<uint8_t>(data_bytes));
}

}  // namespace

TEST(Safetensors, ParsesTensorsAndData) {
  auto a = random_bytes(2 * 3 * 4), b = random_bytes(5 * 2);
  std::string f = st_file({{"a", "F32", {2, 3}, a}, {"b", "BF16", {5}, b}});
  auto h = parse_safetensors_header(as_bytes(f), "x");
  ASSERT_EQ(h.entries.size(), 2u);
  EXPECT_EQ(h.entries[0].name, "a");
  EXPECT_EQ(h.entries[0].dtype, DType::F32);
  EXPECT_EQ(h.entries[1].shape, std::vector<int64_t>{5});
  EXPECT_EQ(h.metadata.at("format"), "pt");
  EXPECT_EQ(0, std::memcmp(f.data() + h.data_start + h.entries[1].begin, b.data(), b.size()));
}

TEST(Safetensors, RejectsMalformedHeaders) {
  expect_reject("1234", "too short");
  expect_reject(st_file_from_header("{", {}), "not valid JSON");
  expect_reject(st_file_from_header("[]", {}), "must be a JSON object");
  std::string big = st_file({});
  big[6] = 1;  // header length ~2^48
  expect_reject(big, "exceeds");
  std::string over = st_file({});
  over[0] = char(over[0] + 1);  // header length one past the file
  expect_reject(over, "exceeds the file size");
  expect_reject(header_file({{"t", {{"dtype", "I8"}, {"shape", {4}}, {"data_offsets", {0, 4}}}}}, 4), "not supported");
  expect_reject(header_file({{"t", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 8}}}}}, 8), "needs 16 bytes");
  expect_reject(header_file({{"t", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 16}}}}}, 8),
                "past the data section");
  expect_reject(header_file({{"t", {{"dtype", "F32"}, {"shape", {-4}}, {"data_offsets", {0, 16}}}}}, 16),
                "non-negative");
  expect_reject(header_file({{"t", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {16, 0}}}}}, 16), "begin");
  expect_reject(header_file({{"t", {{"dtype", "F32"}, {"shape", {uint64_t(1) << 62, 8}}, {"data_offsets", {0, 0}}}}}, 0),
                "overflows");
  expect_reject(header_file({{"t", {{"dtype", "F32"}, {"shape", {4}}}}}, 16), "data_offsets");
  expect_reject(header_file({{"t", {{"shape", {4}}, {"data_offsets", {0, 16}}}}}, 16), "dtype");
  expect_reject(header_file({{"t", 3}}, 0), "must be an object");
  expect_reject(header_file({{"a", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 16}}}},
                             {"e", {{"dtype", "F32"}, {"shape", {0}}, {"data_offsets", {4, 4}}}},
                             {"b", {{"dtype", "F16"}, {"shape", {4}}, {"data_offsets", {8, 16}}}}},
                            16),
                "overlap");
}

TEST(Safetensors, ShardedCheckpointWithIndex) {
  TempDir dir;
  auto a = random_bytes(8), b = random_bytes(16);
  write_file(dir / "model-00001-of-00002.safetensors", st_file({{"a", "F16", {4}, a}}));
  write_file(dir / "model-00002-of-00002.safetensors", st_file({{"b", "F32", {2, 2}, b}}));
  json idx = {{"metadata", {{"total_size", 24}}},
              {"weight_map", {{"a", "model-00001-of-00002.safetensors"}, {"b", "model-00002-of-00002.safetensors"}}}};
  write_file(dir / "model.safetensors.index.json", idx.dump());
  Checkpoint ck(dir.path);
  ASSERT_EQ(ck.tensors().size(), 2u);
  const SafeTensor* tb = ck.find("b");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(tb->file, "model-00002-of-00002.safetensors");
  ASSERT_EQ(tb->data.size(), 16u);
  EXPECT_EQ(0, std::memcmp(tb->data.data(), b.data(), 16));

  idx["weight_map"]["b"] = "../model-00002-of-00002.safetensors";
  write_file(dir / "model.safetensors.index.json", idx.dump());
  EXPECT_THROW(Checkpoint{dir.path}, Error);
  idx["weight_map"]["b"] = "model-00001-of-00002.safetensors";
  write_file(dir / "model.safetensors.index.json", idx.dump());
  try {
    Checkpoint ck2(dir.path);
    ADD_FAILURE() << "index naming the wrong file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'b'"), std::string::npos) << e.what();
  }
}

TEST(Safetensors, DuplicateTensorAcrossFilesRejected) {
  TempDir dir;
  write_file(dir / "m1.safetensors", st_file({{"a", "F16", {4}, random_bytes(8)}}));
  write_file(dir / "m2.safetensors", st_file({{"a", "F16", {4}, random_bytes(8)}}));
  write_file(dir / "model.safetensors.index.json",
             json{{"weight_map", {{"a", "m1.safetensors"}, {"b", "m2.safetensors"}}}}.dump());
  EXPECT_THROW(Checkpoint{dir.path}, Error);
}

TEST(Safetensors, ReadsSharedTinyModels) {
  BS_REQUIRE_SHARED();
  for (auto m : {"llama-tiny", "qwen3-tiny", "gemma3-tiny"}) {
    Checkpoint ck(shared_dir() / "data/models" / m);
    const SafeTensor* e = ck.find("model.embed_tokens.weight");
    ASSERT_NE(e, nullptr) << m;
    EXPECT_EQ(e->dtype, DType::BF16);
    EXPECT_EQ(e->shape, (std::vector<int64_t>{1024, 256}));
    EXPECT_EQ(e->data.size(), 1024u * 256 * 2);
  }
}
