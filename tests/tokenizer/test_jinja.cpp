// The Jinja interpreter feature by feature, against what Jinja2 (as HF configures it) renders.
#include <gtest/gtest.h>

#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja.h"

using bs::tok::jinja::Template;
using nlohmann::ordered_json;

namespace {

std::string render(const std::string& src, const ordered_json& ctx = ordered_json::object()) {
  return Template(src, "t").render(ctx);
}

std::string error_of(const std::string& src, const ordered_json& ctx = ordered_json::object()) {
  try {
    render(src, ctx);
  } catch (const bs::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Jinja, TextAndOutput) {
  EXPECT_EQ(render("plain"), "plain");
  EXPECT_EQ(render("{{ 'a' }}{{ \"b\" }}{{ 1 }}{{ 2.5 }}{{ none }}{{ true }}"), "ab12.5NoneTrue");
  EXPECT_EQ(render("{{ x }}|{{ x.y }}|{{ x['y'] }}", {}), "||");  // undefined prints nothing
  EXPECT_EQ(render("{{ [1, 'a', none, [true]] }}"), "[1, 'a', None, [True]]");
  EXPECT_EQ(render("{{ {'k': 1, 'a': 'v'} }}"), "{'k': 1, 'a': 'v'}");
  EXPECT_EQ(render("{{ 'it\\'s' ~ \"\\n\" }}"), "it's\n");
  EXPECT_EQ(render("{{ 1.0 }} {{ 1e-5 }} {{ 10 / 4 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 2 ** 10 }}"),
            "1.0 1e-05 2.5 3 -4 2 1024");
}

TEST(Jinja, WhitespaceControl) {
  // trim_blocks eats the newline after a block tag; lstrip_blocks the indentation before it.
  EXPECT_EQ(render("{% if true %}\n  yes\n{% endif %}\n"), "  yes\n");
  EXPECT_EQ(render("a\n    {% if true %}b{% endif %}"), "a\nb");
  EXPECT_EQ(render("a  {%- if true -%}  b  {%- endif %}"), "ab");
  EXPECT_EQ(render("{{ 'x' }}\n"), "x\n");  // expressions keep their newline
  EXPECT_EQ(render("a\n  {{- 'x' -}}\n  b"), "axb");
  EXPECT_EQ(render("{# comment #}\nz"), "z");
  EXPECT_EQ(render("  {%+ if true %}x{% endif +%}\ny"), "  x\ny");
  EXPECT_EQ(render("{% raw %}{{ not parsed }}{% endraw %}"), "{{ not parsed }}");
}

TEST(Jinja, IfElifElse) {
  const char* t = "{% if n > 2 %}big{% elif n == 2 %}two{% else %}small{% endif %}";
  EXPECT_EQ(render(t, {{"n", 3}}), "big");
  EXPECT_EQ(render(t, {{"n", 2}}), "two");
  EXPECT_EQ(render(t, {{"n", 1}}), "small");
  EXPECT_EQ(render("{{ 'y' if x else 'n' }}{{ 'z' if false }}", {{"x", ordered_json::array()}}), "n");
  EXPECT_EQ(render("{{ a and b }} {{ a or b }} {{ not a }}", {{"a", 0}, {"b", "s"}}), "0 s True");
}

TEST(Jinja, ForLoops) {
  ordered_json ctx = {{"xs", {"a", "b", "c"}}};
  EXPECT_EQ(render("{% for x in xs %}{{ loop.index0 }}{{ x }}{% if not loop.last %},{% endif %}{% endfor %}", ctx),
            "0a,1b,2c");
  EXPECT_EQ(render("{% for x in xs %}{{ loop.index }}/{{ loop.length }}{{ loop.first }}{% endfor %}", ctx),
            "1/3True2/3False3/3False");
  EXPECT_EQ(render("{% for x in xs if x != 'b' %}{{ x }}{{ loop.revindex0 }}{% endfor %}", ctx), "a1c0");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", {{"d", {{"z", 1}, {"a", 2}}}}),
            "z=1;a=2;");
  EXPECT_EQ(render("{% for x in range(5) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}"
                   "{% endif %}{{ x }}{% endfor %}"),
            "02");
  EXPECT_EQ(render("{% for x in xs %}{{ loop.cycle('-', '+') }}{{ loop.previtem }}{% endfor %}", ctx), "-+a-b");
}

TEST(Jinja, ScopingAndNamespace) {
  // A set inside a loop does not leak out; namespace() attributes do.
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = 5 %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"),
            "6");
  EXPECT_EQ(render("{% set a, b = 1, 2 %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(render("{% set block %}x{{ 1 + 1 }}{% endset %}[{{ block }}]"), "[x2]");
  EXPECT_NE(error_of("{% set x = 1 %}{% set x.y = 2 %}").find("namespace"), std::string::npos);
}

TEST(Jinja, Macros) {
  EXPECT_EQ(render("{% macro greet(name, punct='!') %}hi {{ name }}{{ punct }}{% endmacro %}"
                   "{{ greet('a') }} {{ greet('b', '?') }} {{ greet(punct='.', name='c') }}"),
            "hi a! hi b? hi c.");
  EXPECT_NE(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").find("deep"), std::string::npos);
}

TEST(Jinja, OperatorsAndTests) {
  EXPECT_EQ(render("{{ 'a' in 'cat' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 1} }}{{ 3 not in [1] }}"), "TrueTrueTrueTrue");
  EXPECT_EQ(render("{{ [1] + [2] }}{{ 'ab' * 2 }}{{ 1 == 1.0 }}{{ 'a' < 'b' }}{{ none is none }}"),
            "[1, 2]ababTrueTrueTrue");
  EXPECT_EQ(render("{{ x is defined }}{{ y is not defined }}{{ x is string }}{{ x is mapping }}", {{"x", "s"}}),
            "TrueTrueTrueFalse");
  EXPECT_EQ(render("{{ 4 is even }}{{ 3 is odd }}{{ 9 is divisibleby 3 }}{{ [] is iterable }}{{ 1 is number }}"),
            "TrueTrueTrueTrueTrue");
  EXPECT_EQ(render("{{ -x|abs }}{{ not x is defined }}", {{"x", 3}}), "3False");
  // Jinja's precedence: * over ~ over +, so "1 + 2 ~ 'x'" adds 1 to a string.
  EXPECT_EQ(render("{{ 'n=' ~ 2 * 3 }}{{ 1 - 1 ~ 'x' if false else 'y' }}"), "n=6y");
  EXPECT_NE(error_of("{{ 1 + 2 ~ 'x' }}").find("'int' and 'str'"), std::string::npos);
}

TEST(Jinja, Filters) {
  ordered_json ctx = {{"msgs", {{{"role", "system"}, {"content", "S"}}, {{"role", "user"}, {"content", "U"}}}}};
  EXPECT_EQ(render("{{ '  x \\n' | trim }}|{{ 'ab' | upper }}|{{ 'AB' | lower }}|{{ 'hi there' | title }}"), "x|AB|ab|Hi There");
  EXPECT_EQ(render("{{ msgs | length }}{{ 'héllo' | length }}{{ x | default('d') }}{{ '' | default('e', true) }}", ctx),
            "25de");
  EXPECT_EQ(render("{{ msgs | selectattr('role', 'equalto', 'user') | map(attribute='content') | join(',') }}", ctx), "U");
  EXPECT_EQ(render("{{ msgs | rejectattr('role', 'eq', 'user') | list | length }}", ctx), "1");
  EXPECT_EQ(render("{{ [3, 1, 2] | sort | first }}{{ [3, 1, 2] | last }}{{ [1, 1, 2] | unique | list }}"), "12[1, 2]");
  EXPECT_EQ(render("{{ {'b': 1, 'a': [1, 'é']} | tojson }}"), "{\"b\": 1, \"a\": [1, \"é\"]}");
  EXPECT_EQ(render("{{ {'a': [1]} | tojson(indent=2) }}"), "{\n  \"a\": [\n    1\n  ]\n}");
  EXPECT_EQ(render("{{ 'a\"\\n' | tojson }}"), "\"a\\\"\\n\"");
  EXPECT_EQ(render("{{ 42 | string ~ 1 }}{{ '7' | int + 1 }}{{ 'x' | int }}{{ 2.7 | int }}{{ '2.5' | float }}"), "4218022.5");
  EXPECT_EQ(render("{{ 'a-b-c' | replace('-', '+') }}{{ [1, 2, 3] | select('odd') | list }}{{ [1, 2] | sum }}"),
            "a+b+c[1, 3]3");
  EXPECT_EQ(render("{{ 'line1\\nline2' | indent(2) }}"), "line1\n  line2");
  EXPECT_EQ(render("{{ {'b': 2, 'a': 1} | dictsort | first | first }}{{ d.items() | list | length }}", {{"d", {{"k", 1}}}}),
            "a1");
}

TEST(Jinja, StringAndDictMethods) {
  EXPECT_EQ(render("{{ 'hello'.startswith('he') }}{{ 'hello'.endswith(('x', 'lo')) }}{{ ' a '.strip() }}"),
            "TrueTruea");
  EXPECT_EQ(render("{{ 'a,b,,c'.split(',') }}{{ ' a  b '.split() }}{{ 'a b c'.split(' ', 1) }}"),
            "['a', 'b', '', 'c']['a', 'b']['a', 'b c']");
  EXPECT_EQ(render("{{ 'x</think>y'.split('</think>')[-1].lstrip('\\n') }}{{ 'abc'.upper() }}{{ 'Abc'.lower() }}"),
            "yABCabc");
  EXPECT_EQ(render("{{ 'abcabc'.replace('b', 'X', 1) }}{{ 'abc'.find('c') }}{{ '-'.join(['a', 'b']) }}"), "aXcabc2a-b");
  EXPECT_EQ(render("{{ d.get('a') }}{{ d.get('z', 'no') }}{{ d.keys() | list }}{{ d.values() | list }}",
                   {{"d", {{"a", 1}}}}),
            "1no['a'][1]");
  EXPECT_EQ(render("{{ 'hello'[1:3] }}{{ 'hello'[::-1] }}{{ [1, 2, 3][-2:] }}{{ 'héllo'[1] }}{{ [1, 2, 3][:-1] }}"),
            "elolleh[2, 3]\xC3\xA9[1, 2]");
}

TEST(Jinja, Globals) {
  EXPECT_EQ(render("{{ range(3) | list }}{{ range(1, 7, 2) | list }}"), "[0, 1, 2][1, 3, 5]");
  EXPECT_EQ(render("{{ dict(a=1)['a'] }}"), "1");
  EXPECT_EQ(render("{{ strftime_now('%Y') | length }}"), "4");
  std::string msg = error_of("\n  {{ raise_exception('Roles must alternate') }}");
  EXPECT_NE(msg.find("Roles must alternate"), std::string::npos) << msg;
  EXPECT_NE(msg.find("t:2:"), std::string::npos) << msg;
}

TEST(Jinja, ParseErrorsHaveLineAndColumn) {
  auto parse_error = [](const std::string& src) -> std::string {
    try {
      Template(src, "tmpl");
    } catch (const bs::Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(parse_error("ok\n{% if x %}\nno end"), "tmpl:3:7: unexpected end of template; expected {% elif %}");
  EXPECT_EQ(parse_error("{{ 1 + }}"), "tmpl:1:8: expected an expression, got '}}'");
  EXPECT_EQ(parse_error("a\n  {% bogus %}"), "tmpl:2:6: unknown or unsupported statement 'bogus'");
  EXPECT_EQ(parse_error("{{ 'abc }}"), "tmpl:1:4: unterminated string literal");
  EXPECT_EQ(parse_error("{% for x in y %}{% endif %}"), "tmpl:1:20: unknown or unsupported statement 'endif'");
  EXPECT_EQ(parse_error("{{ x )"), "tmpl:1:6: unbalanced ')'");
  EXPECT_EQ(parse_error("{% include 'x' %}"), "tmpl:1:4: unknown or unsupported statement 'include'");
  std::string deep = parse_error("{{ " + std::string(1000, '(') + "1" + std::string(1000, ')') + " }}");
  EXPECT_NE(deep.find("nested too deeply"), std::string::npos) << deep;
  std::string long_chain;
  for (int i = 0; i < 1000; ++i) long_chain += " ~ x";
  std::string concat = parse_error("{{ x" + long_chain + " }}");
  EXPECT_NE(concat.find("nested too deeply"), std::string::npos) << concat;
}

TEST(Jinja, RuntimeErrorsHaveLineAndColumn) {
  EXPECT_EQ(error_of("{{ x | nope }}"), "t:1:8: unknown filter 'nope'");
  EXPECT_EQ(error_of("\n{{ 1 + 'a' }}"), "t:2:6: unsupported operand type(s) for +: 'int' and 'str'");
  EXPECT_EQ(error_of("{{ 'a'.nope() }}"), "t:1:7: 'str' object has no method 'nope'");
  // Loops with empty bodies still count against the step limit.
  bs::tok::jinja::Limits limits;
  limits.max_steps = 100000;
  Template nested("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "t");
  try {
    nested.render(ordered_json::object(), limits);
    ADD_FAILURE() << "expected the step limit to stop the loop";
  } catch (const bs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("too long"), std::string::npos) << e.what();
  }
}

}  // namespace

// Python's printf-style formatting, `fmt % args` and the format filter (templates write 'Image %d: ' % i).
// Expected strings are Python jinja2 3.1.6's output for the same templates.
TEST(Jinja, PercentFormatting) {
  EXPECT_EQ(render("{{ 'Image %d: ' % 3 }}{{ '%s-%s' % ('a', 1) }}{{ '%.2f' % 3.14159 }}{{ '%5d|%-5d|%05d' % "
                   "(42, 42, 42) }}"),
            "Image 3: a-13.14   42|42   |00042");
  EXPECT_EQ(
      render(
          "{{ '%x %X %#x %o %#o %+d % d' % (255, 255, 255, 8, 8, 5, 5) }}{{ '%x' % -31 }}{{ '%#x' % -31 }}"),
      "ff FF 0xff 10 0o10 +5  5-1f-0x1f");
  EXPECT_EQ(render("{{ '%e %g %G %.3e %10.4f|' % (12345.678, 0.0001, 1e20, 1.5, 2.25) }}{{ '%d' % 3.99 }}"
                   "{{ '%d' % true }}{{ '%i%%' % 50 }}"),
            "1.234568e+04 0.0001 1E+20 1.500e+00     2.2500|3150%");
  EXPECT_EQ(render("{{ '%s' % [1, 2] }}{{ '%r' % 'x' }}{{ '%s' % none }}{{ '%.3s|%5s|%-5s|' % ('abcdef', "
                   "'ab', 'ab') }}"),
            "[1, 2]'x'Noneabc|   ab|ab   |");
  EXPECT_EQ(render("{{ '%(name)s is %(age)d' % {'name': 'Ann', 'age': 30} }}{{ '%c%c' % (65, 'b') }}{{ '%s' "
                   "% {'a': 1} }}"),
            "Ann is 30Ab{'a': 1}");
  EXPECT_EQ(
      render("{{ '%s and %s' | format('x', 2) }}{{ '%(a)s!' | format(a='k') }}{{ '%.1f' | format(0.25) }}"
             "{{ '%s' % '\xc3\xa9' }}{{ '%3s|' % '\xc3\xa9' }}"),
      "x and 2k!0.2\xc3\xa9  \xc3\xa9|");
  for (auto [src, want] : {std::pair{"{{ '%s %s' % ('a',) }}", "not enough arguments for format string"},
                           {"{{ '%d' % 'x' }}", "%d format: a real number is required, not str"},
                           {"{{ '%q' % 1 }}", "unsupported format character 'q'"},
                           {"{{ '%' % 1 }}", "incomplete format"},
                           {"{{ '%(k)s' % {'a': 1} }}", "format key 'k' is missing"}})
    EXPECT_NE(error_of(src).find(want), std::string::npos) << error_of(src);
  EXPECT_EQ(render("{{ '%*d|' % (5, 1) }}"), "    1|");
  EXPECT_EQ(render("{{ '%*d' % (100000000, 1) }}").size(), 4096u);  // width is capped: no huge allocation
}
