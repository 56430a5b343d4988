"""Model outputs per SGLang parser name, shared by the SGLang adapter tests."""

from __future__ import annotations

import random

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    }
]

_HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}\n</tool_call>'

# One realistic output per format: text before the call where the format allows it, then one call.
TOOL_OUTPUTS: dict[str, str] = {
    "qwen25": "Let me check.\n" + _HERMES,
    "hermes": "Let me check.\n" + _HERMES,
    "llama3": '{"name": "get_weather", "parameters": {"city": "Paris", "days": 2}}',
    "mistral": '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}]',
    "pythonic": '[get_weather(city="Paris", days=2)]',
    "deepseekv3": (
        "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city": "Paris", "days": 2}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
    "deepseekv31": (
        "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        '{"city": "Paris", "days": 2}<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
    ),
    "qwen3_coder": (
        "Let me check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"
    ),
    "kimi_k2": (
        "Let me check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Paris", "days": 2}<|tool_call_end|><|tool_calls_section_end|>'
    ),
    "glm45": (
        "Let me check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>"
    ),
    "step3": (
        "Let me check.<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜>"
        '<steptml:invoke name="get_weather"><steptml:parameter name="city">Paris</steptml:parameter>'
        '<steptml:parameter name="days">2</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>'
    ),
    "minimax-m2": (
        'Let me check.\n<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
        '<parameter name="days">2</parameter>\n</invoke>\n</minimax:tool_call>'
    ),
    "gpt-oss": (
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"city": "Paris", "days": 2}<|call|>'
    ),
}

REASONING_OUTPUTS: dict[str, str] = {
    "deepseek-r1": "<think>The user wants the weather.\nCheck Paris.</think>It is sunny in Paris.",
    "qwen3": "<think>The user wants the weather.\nCheck Paris.</think>\n\nIt is sunny in Paris.",
    "qwen3-thinking": "The user wants the weather.\nCheck Paris.</think>\n\nIt is sunny in Paris.",
    "glm45": "<think>The user wants the weather.</think>It is sunny in Paris.",
    "kimi": "◁think▷The user wants the weather.◁/think▷It is sunny in Paris.",
    "minimax": "The user wants the weather.</think>It is sunny in Paris.",
    "step3": "The user wants the weather.</think>It is sunny in Paris.",
    "mistral": "[THINK]The user wants the weather.[/THINK]It is sunny in Paris.",
    "gpt-oss": (
        "<|channel|>analysis<|message|>The user wants the weather.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>It is sunny in Paris.<|return|>"
    ),
}

DEFAULT_TOOL_TEXT = TOOL_OUTPUTS["qwen25"]
DEFAULT_REASONING_TEXT = REASONING_OUTPUTS["deepseek-r1"]


def char_chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def random_chunks(text: str, seed: int, max_size: int = 12) -> list[str]:
    rng = random.Random(seed)
    out: list[str] = []
    i = 0
    while i < len(text):
        n = rng.randint(1, max_size)
        out.append(text[i : i + n])
        i += n
    return out or [""]


#: Chunkings every faithfulness test runs (name → splitter).
CHUNKINGS = {
    "char": lambda t: char_chunks(t, 1),
    "5-chars": lambda t: char_chunks(t, 5),
    "random-7": lambda t: random_chunks(t, 7),
    "random-42": lambda t: random_chunks(t, 42),
    "whole": lambda t: [t],
}
