// Small helpers shared by subcommands.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace bs::cli {

// "1,2, 3" -> {1,2,3}; throws bs::Error(usage) naming `flag` on anything else.
std::vector<int32_t> parse_ids(const std::string& text, const char* flag);

}  // namespace bs::cli
