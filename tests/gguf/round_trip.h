// The GGUF round trip the family tests share: a model converted from safetensors, written as llama.cpp's
// converter writes it (export-gguf), imported back (convert FILE.gguf), and compared: config, tensor bytes,
// logits on lavapipe.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "rdrr/gguf.h"
#include "tests/common/testing.h"

namespace bs::testing {

// hf -> convert (quant) -> export-gguf (with export_args) -> convert back, in `work`: the same config (the
// fields a GGUF carries), the same bytes in every tensor (Gemma's 1 + w norms: the same 1 + w), the same
// logits for `tokens` (rel L2 <= 1e-6, argmax of every row equal). Returns the GGUF path.
std::filesystem::path expect_round_trip(const std::filesystem::path& hf, const std::string& quant,
                                        const std::filesystem::path& work, const std::string& arch,
                                        const std::string& tokens,
                                        const std::vector<std::string>& export_args = {});

// `blueshift synth` of the config `cfg` in dir/hf; returns dir/hf.
std::filesystem::path synth(const std::filesystem::path& dir, const nlohmann::json& cfg);

// `src` written again with metadata `key` set to `v` (or dropped when v is null) and, where `tensor` is
// named, its first 4 bytes set to `first`.
void rewrite(const std::filesystem::path& src, const std::filesystem::path& dst, const std::string& key,
             std::optional<gguf::Value> v, const std::string& tensor = "", float first = 0);

// `src` written again without the tensor `tensor` (or with it named `rename`).
void drop_tensor(const std::filesystem::path& src, const std::filesystem::path& dst,
                 const std::string& tensor, const std::string& rename = "");

// `convert FILE out` refuses the file: exit 3, `what` in its message, nothing left at `out`.
void expect_convert_refused(const std::filesystem::path& file, const std::filesystem::path& out,
                            const std::string& what);

// The whole of `file`'s bytes.
std::vector<uint8_t> file_bytes(const std::filesystem::path& file);

// `iterations` mutations of `good` through the fuzz target (fuzz_gguf.cpp): each flips a bit or writes one of
// `words` at 1 to 3 offsets below `end` (the part of the file the parser and the import plan read).
void fuzz_mutations(const std::vector<uint8_t>& good, size_t end, std::span<const uint32_t> words,
                    std::mt19937_64& r, int iterations);

}  // namespace bs::testing
