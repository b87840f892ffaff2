// Tuning and A/B switches read from the environment (the README lists them).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace bs {

// Whether `name` is set to anything but "0".
inline bool env_switch(const char* name) {
  const char* e = std::getenv(name);
  return e && std::strcmp(e, "0") != 0;
}

// The unsigned number in `name` (0 when it does not parse), or `fallback` when it is unset.
inline uint32_t env_uint(const char* name, uint32_t fallback) {
  const char* e = std::getenv(name);
  return e ? uint32_t(std::strtoul(e, nullptr, 10)) : fallback;
}

}  // namespace bs
