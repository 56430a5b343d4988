"""A/B: results built through the checked `fill_fields` vs the unchecked store it replaced.

`make_tool_call`, `make_tool_result` and `make_reasoning_result` build pydantic
models without validation: `alloc(cls)` plus `protocol.models.fill_fields`,
which is BaseModel's `__dict__` slot store on the pydantic releases it was
written for and pydantic's normal construction elsewhere. This times, in one
process and in alternating rounds, each maker against the same code calling
the descriptor's store unchecked (what the makers did before), and the
fallback (what an unknown pydantic release gets) against that, and prints the
ratios side by side.

Run:  python -m benchmarks.fast_construction [--rounds 7] [--number 200000]
"""

from __future__ import annotations

import argparse
import timeit
from typing import Any

from pydantic import BaseModel

from parsebridge.protocol import models
from parsebridge.protocol.models import (
    ReasoningParseResult,
    ToolCall,
    ToolParseResult,
    init_fields,
    make_block,
    make_reasoning_result,
    make_tool_call,
    make_tool_result,
    new_call_id,
    parse_arguments,
)

_alloc = object.__new__
_set = BaseModel.__dict__["__dict__"].__set__


def inline_tool_call(name: str, arguments_text: str, id: str | None = None, raw_text: str = "") -> ToolCall:
    parsed, invalid = parse_arguments(arguments_text)
    call = _alloc(ToolCall)
    _set(
        call,
        {
            "id": id or new_call_id(),
            "name": name,
            "arguments": parsed,
            "raw_text": raw_text,
            "invalid_arguments": invalid,
        },
    )
    return call


def inline_tool_result(content: str | None, tool_calls: list[ToolCall]) -> ToolParseResult:
    result = _alloc(ToolParseResult)
    _set(result, {"content": content, "tool_calls": tool_calls})
    return result


def inline_reasoning_result(reasoning: str | None, content: str | None, block: Any) -> ReasoningParseResult:
    result = _alloc(ReasoningParseResult)
    _set(result, {"reasoning": reasoning, "content": content, "block": block})
    return result


def fallback_tool_result(content: str | None, tool_calls: list[ToolCall]) -> ToolParseResult:
    result = _alloc(ToolParseResult)
    init_fields(result, {"content": content, "tool_calls": tool_calls})
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--number", type=int, default=200_000)
    args = ap.parse_args(argv)
    block = make_block("r", None, None, 0, 1, False)
    calls = [make_tool_call("f", "{}", "c")]
    env = {
        "make_tool_call": make_tool_call,
        "inline_tool_call": inline_tool_call,
        "make_tool_result": make_tool_result,
        "inline_tool_result": inline_tool_result,
        "make_reasoning_result": make_reasoning_result,
        "inline_reasoning_result": inline_reasoning_result,
        "fallback_tool_result": fallback_tool_result,
        "calls": calls,
        "block": block,
    }
    pairs = {
        "make_tool_call": (
            "inline_tool_call('f', '{\"a\": 1}', 'c')",
            "make_tool_call('f', '{\"a\": 1}', 'c')",
        ),
        "make_tool_result": ("inline_tool_result('x', calls)", "make_tool_result('x', calls)"),
        "make_reasoning_result": (
            "inline_reasoning_result('r', 'c', block)",
            "make_reasoning_result('r', 'c', block)",
        ),
        "make_tool_result, fallback": ("inline_tool_result('x', calls)", "fallback_tool_result('x', calls)"),
    }
    fallback_tool_result("x", calls)  # build the validator before timing
    print(f"fast path: {models.FAST_CONSTRUCTION}; {args.rounds} rounds x {args.number:,} calls, best round")
    print(f"{'maker':34} {'before ns':>10} {'now ns':>10} {'ratio':>7}")
    for label, (old, new) in pairs.items():
        best_old = best_new = float("inf")
        for _ in range(args.rounds):  # alternate, so drift in machine load hits both
            best_old = min(best_old, timeit.timeit(old, globals=env, number=args.number))
            best_new = min(best_new, timeit.timeit(new, globals=env, number=args.number))
        per_old, per_new = best_old / args.number * 1e9, best_new / args.number * 1e9
        print(f"{label:34} {per_old:10.1f} {per_new:10.1f} {per_new / per_old:7.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
