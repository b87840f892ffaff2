// libFuzzer target: the static checker reads the bundle's CSL, run.py and compile.sh, which come
// from outside. The input is split into the four sources at 0xff bytes. It must never crash or hang.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/csl/csl_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bs::csl::BundleSources src;
  std::string* parts[] = {&src.layout, &src.pe, &src.run_py, &src.compile_sh};
  size_t part = 0;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0xff && part < 3) ++part;
    else parts[part]->push_back(char(data[i]));
  }
  (void)bs::csl::check_csl(src);
  return 0;
}
