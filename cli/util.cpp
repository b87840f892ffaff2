#include "cli/util.h"

#include <cerrno>
#include <cstdlib>

#include "runtime/base/error.h"

namespace bs::cli {

std::vector<int32_t> parse_ids(const std::string& text, const char* flag) {
  std::vector<int32_t> ids;
  const char* p = text.c_str();
  while (*p) {
    while (*p == ' ' || *p == ',') ++p;
    if (!*p) break;
    char* end = nullptr;
    errno = 0;
    long v = std::strtol(p, &end, 10);
    if (end == p || errno || v < 0 || v > INT32_MAX)
      fail_kind(ErrorKind::usage, "{}: expected comma-separated non-negative token ids, got '{}'", flag, text);
    ids.push_back(int32_t(v));
    p = end;
    if (*p && *p != ',' && *p != ' ') fail_kind(ErrorKind::usage, "{}: unexpected '{}' in '{}'", flag, *p, text);
  }
  if (ids.empty()) fail_kind(ErrorKind::usage, "{}: no token ids given", flag);
  return ids;
}

}  // namespace bs::cli
