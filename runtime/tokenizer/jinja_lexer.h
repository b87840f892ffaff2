// Jinja lexer: template text and the tokens inside {{ }} / {% %}, with HF's whitespace settings
// (trim_blocks, lstrip_blocks) and {%- -%} / {%+ +%} control applied to the text tokens.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tokenizer/jinja_ast.h"

namespace bs::tok::jinja {

struct Token {
  enum class Kind { text, var_begin, var_end, block_begin, block_end, name, string, integer, real, op, eof };
  Kind kind;
  std::string s;  // text, name, string value, operator
  int64_t i = 0;
  double d = 0;
  Pos pos;
};

std::vector<Token> lex_template(std::string_view src, const std::string& name);

}  // namespace bs::tok::jinja
