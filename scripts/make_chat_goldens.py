#!/usr/bin/env python3
"""Expected renderings of the real chat templates of Gemma 4, Qwen 3.5 and LFM2.5 (committed under
tests/tokenizer/chat_templates/, sources in SOURCES.md there), made by real Jinja implementations and
never by blueshift:

  * Python jinja2, set up exactly as transformers' apply_chat_template sets it up
    (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loopcontrols; tojson as json.dumps
    with ensure_ascii=False; raise_exception and strftime_now globals; tools=None and documents=None
    passed when absent). This is the rendering a model was trained on: it is the golden.
  * @huggingface/jinja (transformers.js's engine) through scripts/hf_jinja_render.cjs, as a second
    opinion: where it differs or fails, the case records what it gave under "hf_jinja".

    pip install jinja2        # or Debian's python3-jinja2
    npm install --prefix /tmp/hfjinja @huggingface/jinja@0.5.11
    NODE_PATH=/tmp/hfjinja/node_modules python3 scripts/make_chat_goldens.py

writes tests/tokenizer/chat_templates/NAME.golden.json:
    {"template", "renderer", "cases": [{"name", "context", "expected" | "error", ["hf_jinja"]}]}
where "context" is every variable the template sees (messages, add_generation_prompt, bos_token, ...).
"""
import copy
import datetime
import json
import os
import subprocess
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DIR = os.path.join(ROOT, "tests", "tokenizer", "chat_templates")


def transformers_env():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.datetime.now().strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def msg(role, content, **more):
    return {"role": role, "content": content, **more}


MULTI_TURN = [msg("system", "You are terse. "), msg("user", "What color is the sky?"), msg("assistant", "Blue."),
              msg("user", "  And at night?\n")]
USER_ONLY = [msg("user", "Hi there")]

# An OpenAI-style function spec with the shapes templates treat differently: a string enum, an
# integer, a nullable list-typed field, an array of objects, a nested object.
WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
        "days": {"type": "integer", "description": "Forecast days"},
        "note": {"type": ["string", "null"], "description": "Free text", "nullable": True},
        "stops": {"type": "array", "description": "Route",
                  "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        "where": {"type": "object", "description": "Coordinates",
                  "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}, "required": ["lat", "lon"]}},
        "required": ["city"]}}}
TIME_TOOL = {"type": "function", "function": {"name": "get_time", "description": "Time now",
                                              "parameters": {"type": "object", "properties": {}}}}

TEMPLATES = {
    "gemma4": ({"bos_token": "<bos>", "eos_token": "<eos>"}, [
        ("multi_turn_gen", MULTI_TURN, True, {}),
        ("multi_turn_no_gen", MULTI_TURN, False, {}),
        ("user_only_gen", USER_ONLY, True, {}),
        ("developer_role", [msg("developer", "Obey."), msg("user", "Go")], True, {}),
        ("thinking_on", MULTI_TURN, True, {"enable_thinking": True}),
        ("thinking_off_explicit", USER_ONLY, True, {"enable_thinking": False}),
        ("strip_thinking", [msg("user", "2+2?"), msg("assistant", "<|channel>thought\nadd them<channel|> 4 "),
                            msg("user", "3+3?")], True, {}),
        ("tools", [msg("system", "Use tools."), msg("user", "Weather in Paris?")], True,
         {"tools": [WEATHER_TOOL, TIME_TOOL]}),
        ("tool_call_and_response", [
            msg("user", "Weather in Paris?"),
            msg("assistant", "", tool_calls=[{"type": "function", "function": {"name": "get_weather", "arguments": {
                "city": "Paris", "days": 2, "flag": True, "where": {"lat": 48.5, "lon": -2}, "tags": ["a", "b"],
                "note": None, "ratio": 1e-7}}}]),
            msg("tool", "", tool_responses=[{"name": "get_weather", "response": {"temp": 21, "sky": "clear"}}]),
        ], True, {"tools": [WEATHER_TOOL]}),
        ("tool_response_scalar", [
            msg("user", "Time?"),
            msg("assistant", None, tool_calls=[{"function": {"name": "get_time", "arguments": "{}"}}]),
            msg("tool", None, tool_responses=[{"name": "get_time", "response": "12:00"}]),
            msg("assistant", "It is noon."),
            msg("user", "Thanks"),
        ], True, {"tools": [TIME_TOOL]}),
        ("multimodal", [msg("user", [{"type": "text", "text": " Describe "}, {"type": "image"}, {"type": "audio"},
                                     {"type": "video"}])], True, {}),
    ]),
    "qwen3_5": ({"bos_token": None, "eos_token": "<|im_end|>"}, [
        ("multi_turn_gen", MULTI_TURN, True, {}),
        ("multi_turn_no_gen", MULTI_TURN, False, {}),
        ("user_only_gen", USER_ONLY, True, {}),
        ("thinking_on", MULTI_TURN, True, {"enable_thinking": True}),
        ("thinking_off_explicit", USER_ONLY, True, {"enable_thinking": False}),
        ("reasoning_after_last_query", [
            msg("user", "2+2?"), msg("assistant", "<think>\nadd them\n</think>\n\n4"),
            msg("user", "3+3?"), msg("assistant", "<think>\nagain\n</think>\n\n6"),
        ], False, {}),
        ("reasoning_content_field", [msg("user", "Hi"), msg("assistant", "Hello", reasoning_content=" greet ")],
         True, {"enable_thinking": True}),
        ("tools", [msg("system", "Use tools."), msg("user", "Weather in Paris?")], True,
         {"tools": [WEATHER_TOOL, TIME_TOOL]}),
        ("tool_calls_and_responses", [
            msg("user", "Weather in Paris and the time?"),
            msg("assistant", "Checking.", tool_calls=[
                {"type": "function", "function": {"name": "get_weather", "arguments": {
                    "city": "Paris", "days": 2, "where": {"lat": 48.5, "lon": -2}, "stops": ["a", "b"],
                    "metric": True, "note": None, "ratio": 0.25}}},
                {"type": "function", "function": {"name": "get_time", "arguments": {}}}]),
            msg("tool", "{\"temp\": 21}"),
            msg("tool", "12:00"),
        ], True, {"tools": [WEATHER_TOOL, TIME_TOOL]}),
        ("vision_content", [msg("user", [{"type": "image"}, {"type": "text", "text": "What is this?"},
                                         {"type": "video"}])], True, {"add_vision_id": True}),
        ("no_user_query", [msg("system", "Only a system message")], True, {}),
        ("system_not_first", [msg("user", "a"), msg("system", "b")], True, {}),
    ]),
    "lfm2_5": ({"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"}, [
        ("multi_turn_gen", MULTI_TURN, True, {}),
        ("multi_turn_no_gen", MULTI_TURN, False, {}),
        ("user_only_gen", USER_ONLY, True, {}),
        ("tools", [msg("system", "Use tools."), msg("user", "Weather in Paris?")], True,
         {"tools": [WEATHER_TOOL, "{\"name\": \"raw_tool\"}"]}),
        ("tool_role", [msg("user", "Weather?"),
                       msg("assistant", "<|tool_call_start|>[get_weather(city=\"Paris\")]<|tool_call_end|>"),
                       msg("tool", "[{\"temp\": 21}]"), msg("assistant", "21 degrees.")], False,
         {"tools": [WEATHER_TOOL]}),
        ("past_thinking_dropped", [msg("user", "2+2?"), msg("assistant", "<think>add</think>\n 4 "),
                                   msg("user", "3+3?"), msg("assistant", "<think>again</think>6")], False, {}),
        ("past_thinking_kept", [msg("user", "2+2?"), msg("assistant", "<think>add</think>\n 4 "),
                                msg("user", "3+3?")], True, {"keep_past_thinking": True}),
        ("list_content", [msg("user", [{"type": "text", "text": "h\u00e9 \"quoted\""}])], True, {}),
    ]),
}


def hf_jinja(source, contexts):
    """@huggingface/jinja's renderings, or None where node or the package is missing."""
    script = os.path.join(ROOT, "scripts", "hf_jinja_render.cjs")
    try:
        p = subprocess.run(["node", script], input=json.dumps({"template": source, "contexts": contexts}),
                           capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"  @huggingface/jinja not run ({getattr(e, 'stderr', '') or e}); set NODE_PATH", file=sys.stderr)
        return None
    return json.loads(p.stdout)


def main():
    env = transformers_env()
    for name, (special, cases) in TEMPLATES.items():
        with open(os.path.join(DIR, f"{name}.jinja"), encoding="utf-8") as f:
            source = f.read()
        template = env.from_string(source)
        contexts = []
        for _, messages, add_generation_prompt, extra in cases:
            ctx = {"messages": copy.deepcopy(messages), "tools": None, "documents": None,
                   "add_generation_prompt": add_generation_prompt, **special, **copy.deepcopy(extra)}
            contexts.append(ctx)
        second = hf_jinja(source, contexts)
        out_cases, differ = [], 0
        for i, ((case_name, *_), ctx) in enumerate(zip(cases, contexts)):
            case = {"name": case_name, "context": ctx}
            try:
                case["expected"] = template.render(**copy.deepcopy(ctx))
            except jinja2.exceptions.TemplateError as e:
                case["error"] = str(e)
            if second is not None:
                r = second["results"][i]
                agree = ("expected" in case and r.get("text") == case["expected"]) or (
                    "error" in case and "error" in r and case["error"] in r["error"])
                if not agree:
                    differ += 1
                    case["hf_jinja"] = r.get("text", "error: " + r.get("error", ""))
            out_cases.append(case)
        renderer = f"jinja2 {jinja2.__version__} as transformers sets it up"
        if second is not None:
            renderer += f"; cross-checked with {second['renderer']}"
        with open(os.path.join(DIR, f"{name}.golden.json"), "w", encoding="utf-8") as f:
            json.dump({"template": f"{name}.jinja", "renderer": renderer, "cases": out_cases}, f, indent=1,
                      ensure_ascii=False)
            f.write("\n")
        print(f"{name}: {len(out_cases)} cases, {sum('error' in c for c in out_cases)} raising, "
              f"{differ} where @huggingface/jinja differs" if second else "")


if __name__ == "__main__":
    main()
