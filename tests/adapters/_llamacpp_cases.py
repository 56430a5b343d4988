"""The inputs llama.cpp's own chat tests parse, read out of ``tests/test-chat.cpp``.

That file drives its parser tests with a fluent builder::

    auto tst = peg_tester("models/templates/Qwen3.5-4B.jinja", detailed_debug);
    tst.test("I'm\\nthinking\\n</think>\\n\\nHello").reasoning_format(COMMON_REASONING_FORMAT_AUTO)
        .enable_thinking(true).tools({ special_function_tool }).expect(...).run();

`cases` finds every ``X.test(LITERAL...)...run()`` chain whose input is made of string literals only
and whose settings are ones a ``llamacpp:`` parser can be given (reasoning format none or auto,
enable_thinking, parallel_tool_calls, tool_choice, tools named among the file's
``static common_chat_tool`` constants); chains that set anything else (messages, a JSON schema,
a continuation, a partial final parse) are left out. Only the inputs are read here: what
llama.cpp makes of them comes from the reference reader (``pb-llamacpp-reference``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "'": "'", "\\": "\\", "0": "\0", "?": "?"}
_TESTER = re.compile(r'auto\s+(\w+)\s*=\s*peg_tester\(\s*"([^"]+)"')
_TOOL = re.compile(r"static\s+common_chat_tool\s+(\w+)\s*\{")
_USER = re.compile(r"const\s+common_chat_msg\s+message_user\s*\{")
_SKIP = {"messages", "json_schema", "continue_final_message", "add_generation_prompt", "is_partial"}
_IGNORE = {"expect", "expect_content", "expect_reasoning", "expect_tool_calls", "expect_reconstruction"}


@dataclass
class Case:
    """One parse llama.cpp's tests make: the template, the request's settings and the input."""

    template: str
    input: str
    line: int
    tools: list[dict[str, str]] = field(default_factory=list)
    reasoning_format: str = "none"
    enable_thinking: bool = True
    parallel_tool_calls: bool = False
    tool_choice: str = "auto"

    def request(self, template_path: str, messages: list[dict[str, str]]) -> dict[str, Any]:
        """The reference reader's input line for this case."""
        return {
            "template_path": template_path,
            "tools": self.tools,
            "messages": messages,
            "reasoning_format": self.reasoning_format,
            "enable_thinking": self.enable_thinking,
            "parallel_tool_calls": self.parallel_tool_calls,
            "tool_choice": self.tool_choice,
            "input": self.input,
        }


def _skip_space(src: str, i: int) -> int:
    while i < len(src):
        if src[i].isspace():
            i += 1
        elif src.startswith("//", i):
            i = src.find("\n", i) if src.find("\n", i) != -1 else len(src)
        elif src.startswith("/*", i):
            i = src.index("*/", i) + 2
        else:
            return i
    return i


def _literal(src: str, i: int) -> tuple[str, int] | None:
    """One C++ string literal at `i` (plain or raw, optionally u8): its value and the end."""
    if src.startswith("u8", i):
        i += 2
    if src.startswith('R"', i):
        open_paren = src.index("(", i)
        delim = src[i + 2 : open_paren]
        close = src.index(")" + delim + '"', open_paren)
        return src[open_paren + 1 : close], close + len(delim) + 2
    if not src.startswith('"', i):
        return None
    out, i = [], i + 1
    while src[i] != '"':
        if src[i] == "\\":
            nxt = src[i + 1]
            if nxt == "x":
                m = re.match(r"[0-9a-fA-F]+", src[i + 2 :])
                assert m
                out.append(chr(int(m.group(0), 16)))
                i += 2 + len(m.group(0))
                continue
            if nxt == "u":
                out.append(chr(int(src[i + 2 : i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
        else:
            out.append(src[i])
            i += 1
    # \x escapes build bytes in C++; here they only appear for ASCII, so str is right.
    return "".join(out), i + 1


def _literals(src: str, i: int) -> tuple[str, int] | None:
    """Adjacent literals from `i` (concatenated) up to the next non-literal; None if none."""
    parts = []
    while True:
        i = _skip_space(src, i)
        lit = _literal(src, i)
        if lit is None:
            break
        parts.append(lit[0])
        i = lit[1]
    return ("".join(parts), i) if parts else None


def _balanced(src: str, i: int) -> int:
    """The index just past the ``)`` closing the ``(`` at `i` (string literals skipped)."""
    depth = 0
    while i < len(src):
        ch = src[i]
        if ch == '"' or src.startswith('R"', i):
            lit = _literal(src, i)
            assert lit is not None
            i = lit[1]
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced parentheses")


def _tools(src: str) -> dict[str, dict[str, str]]:
    out = {}
    for m in _TOOL.finditer(src):
        fields, i = [], m.end()
        for _ in range(3):
            lit = _literals(src, i)
            if lit is None:
                break
            fields.append(lit[0])
            i = _skip_space(src, lit[1])
            if src[i] == ",":
                i += 1
        if len(fields) == 3:
            out[m.group(1)] = {"name": fields[0], "description": fields[1], "parameters": fields[2]}
    return out


def user_message(src: str) -> dict[str, str]:
    """The tests' default conversation: ``message_user``."""
    m = _USER.search(src)
    assert m is not None
    role = _literals(src, m.end())
    assert role is not None
    content = _literals(src, _skip_space(src, role[1]) + 1)
    assert content is not None
    return {"role": role[0], "content": content[0]}


def _apply(case: Case, method: str, arg: str, tools: dict[str, dict[str, str]]) -> bool:
    """Set one builder call on `case`; False when the case cannot be expressed."""
    if method in _IGNORE:
        return True
    if method == "reasoning_format":
        fmt = arg.removeprefix("COMMON_REASONING_FORMAT_").lower()
        case.reasoning_format = fmt
        return fmt in ("none", "auto")
    if method in ("enable_thinking", "parallel_tool_calls") and arg in ("true", "false"):
        setattr(case, method, arg == "true")
        return True
    if method == "tool_choice":
        case.tool_choice = arg.removeprefix("COMMON_CHAT_TOOL_CHOICE_").lower()
        return True
    if method == "tools":
        names = [n.strip() for n in arg.strip().strip("{}").split(",") if n.strip()]
        if not all(n in tools for n in names):
            return False
        case.tools = [tools[n] for n in names]
        return True
    return False


def cases(src: str) -> list[Case]:
    """Every test chain of test-chat.cpp a ``llamacpp:`` parser can replay (see module doc)."""
    tools = _tools(src)
    testers = [(m.start(), m.group(1), m.group(2)) for m in _TESTER.finditer(src)]
    out = []
    for m in re.finditer(r"\b(\w+)\.test\(", src):
        known = [t for t in testers if t[0] < m.start() and t[1] == m.group(1)]
        if not known:
            continue
        lit = _literals(src, m.end())
        if lit is None or src[_skip_space(src, lit[1])] != ")":
            continue
        case = Case(known[-1][2], lit[0], src.count("\n", 0, m.start()) + 1)
        i, ok = _skip_space(src, lit[1]) + 1, True
        while True:
            i = _skip_space(src, i)
            call = re.match(r"\.(\w+)\(", src[i:])
            if call is None:
                break
            end = _balanced(src, i + call.end() - 1)
            method, arg = call.group(1), src[i + call.end() : end - 1].strip()
            i = end
            if method == "run":
                break
            ok = ok and (method not in _SKIP) and _apply(case, method, arg, tools)
        if ok:
            out.append(case)
    return out
