// Chat templates in the style of Llama 3, Gemma, Mistral and a ChatML template with tools, written
// for these tests (the structure and idioms of the real ones: system-message extraction, role
// alternation checks, filters binding tighter than +, namespace counters, tojson of tool specs),
// with the output worked out by hand. These need no ../shared.
#include <gtest/gtest.h>

#include "runtime/base/error.h"
#include "runtime/tokenizer/jinja.h"

using nlohmann::ordered_json;

namespace {

ordered_json chat(std::initializer_list<std::pair<const char*, const char*>> turns) {
  ordered_json m = ordered_json::array();
  for (auto& [role, content] : turns) m.push_back({{"role", role}, {"content", content}});
  return m;
}

constexpr const char* kLlama3Style = R"T({{- bos_token }}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] | trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}
{%- if system_message %}
    {{- '<|start_header_id|>system<|end_header_id|>\n\n' + system_message + '<|eot_id|>' }}
{%- endif %}
{%- for message in messages %}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
)T";

TEST(ChatGolden, Llama3Style) {
  ordered_json msgs = chat({{"system", "You are helpful. "}, {"user", "Hi!"}, {"assistant", "Hello."}, {"user", "Bye?"}});
  std::string out = bs::tok::apply_chat_template(kLlama3Style, msgs, true, {{"bos_token", "<|begin_of_text|>"}});
  EXPECT_EQ(out,
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nBye?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  std::string no_system = bs::tok::apply_chat_template(kLlama3Style, chat({{"user", " x "}}), false,
                                                       {{"bos_token", "<|begin_of_text|>"}});
  EXPECT_EQ(no_system, "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>");
}

constexpr const char* kGemmaStyle =
    "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set first_user_prefix = messages[0]['content'] + "
    "'\\n\\n' %}{% set loop_messages = messages[1:] %}{% else %}{% set first_user_prefix = '' %}{% set loop_messages "
    "= messages %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 "
    "== 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'assistant' %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}"
    "{% endif %}{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') + message['content'] "
    "| trim + '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}";

TEST(ChatGolden, GemmaStyle) {
  ordered_json msgs = chat({{"system", "Be terse."}, {"user", "Hi"}, {"assistant", "Hey "}, {"user", "Sky color?"}});
  EXPECT_EQ(bs::tok::apply_chat_template(kGemmaStyle, msgs, true, {{"bos_token", "<bos>"}}),
            "<bos><start_of_turn>user\nBe terse.\n\nHi<end_of_turn>\n<start_of_turn>model\nHey<end_of_turn>\n"
            "<start_of_turn>user\nSky color?<end_of_turn>\n<start_of_turn>model\n");
  try {
    bs::tok::apply_chat_template(kGemmaStyle, chat({{"user", "a"}, {"user", "b"}}), true, {{"bos_token", "<bos>"}});
    FAIL() << "expected the template to raise";
  } catch (const bs::Error& e) {
    EXPECT_NE(std::string(e.what()).find("Conversation roles must alternate"), std::string::npos) << e.what();
  }
}

constexpr const char* kMistralStyle =
    "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}"
    "{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %}";

TEST(ChatGolden, MistralStyle) {
  ordered_json msgs = chat({{"user", "Hi"}, {"assistant", "Hello"}, {"user", "Bye"}});
  EXPECT_EQ(bs::tok::apply_chat_template(kMistralStyle, msgs, true, {{"bos_token", "<s>"}, {"eos_token", "</s>"}}),
            "<s>[INST] Hi [/INST]Hello</s>[INST] Bye [/INST]");
  EXPECT_THROW(bs::tok::apply_chat_template(kMistralStyle, chat({{"system", "x"}}), true, {{"bos_token", "<s>"}}),
               bs::Error);
}

constexpr const char* kChatMlTools = R"T({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0].role == 'system' %}
        {{- messages[0].content + '\n\n' }}
    {%- endif %}
    {{- "# Tools\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools><|im_end|>\n" }}
{%- endif %}
{%- set ns = namespace(last_user=-1) %}
{%- for message in messages %}
    {%- if message.role == 'user' %}{%- set ns.last_user = loop.index0 %}{%- endif %}
{%- endfor %}
{%- for message in messages %}
    {%- if message.role == 'system' and tools %}{%- continue %}{%- endif %}
    {{- '<|im_start|>' + message.role + '\n' }}
    {%- if message.tool_calls is defined %}
        {%- for call in message.tool_calls %}
            {{- '<tool_call>\n{"name": "' + call.function.name + '", "arguments": ' + call.function.arguments | tojson + '}\n</tool_call>' }}
        {%- endfor %}
    {%- else %}
        {{- message.content }}
    {%- endif %}
    {{- '<|im_end|>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
{{- 'last user at ' ~ ns.last_user }})T";

TEST(ChatGolden, ChatMlWithTools) {
  ordered_json msgs = chat({{"system", "S"}, {"user", "Weather?"}});
  msgs.push_back({{"role", "assistant"},
                  {"tool_calls", {{{"function", {{"name", "get_weather"}, {"arguments", {{"city", "Paris"}}}}}}}}});
  ordered_json tools = {{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}}};
  EXPECT_EQ(bs::tok::apply_chat_template(kChatMlTools, msgs, false, {{"tools", tools}}),
            "<|im_start|>system\nS\n\n# Tools\n<tools>\n"
            "{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}}"
            "\n</tools><|im_end|>\n<|im_start|>user\nWeather?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\nlast user at 1");
  // Without tools the system message is an ordinary turn.
  EXPECT_EQ(bs::tok::apply_chat_template(kChatMlTools, chat({{"system", "S"}}), true),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>assistant\nlast user at -1");
}

}  // namespace
