# cmake -DNAME=n -DSPV=file.spv -DOUT=file.cpp -P embed.cmake: writes the SPIR-V words as a C++ array.
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" len)
math(EXPR nwords "${len} / 8")
# SPIR-V is little-endian 32-bit words: reorder each 4-byte group into one 0x........ literal.
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "((0x........u,){8})" "\\1\n" words "${words}")
file(WRITE ${OUT} "// generated from ${NAME}.spv by kernels_glsl/embed.cmake\n#include <cstddef>\n#include <cstdint>\nnamespace bs::kernels {\nextern const uint32_t kSpv_${NAME}[] = {\n${words}\n};\nextern const size_t kSpvWords_${NAME} = ${nwords};\n}\n")
