"""Every parser name vLLM and SGLang register resolves to a family of the table (issue 27)."""

from __future__ import annotations

import pytest

from parsebridge.adapters import get_backend
from parsebridge.protocol import family_table


@pytest.mark.framework
@pytest.mark.parametrize("backend", ["vllm", "sglang"])
def test_every_framework_parser_name_is_a_family_name_or_alias(backend: str) -> None:
    be = get_backend(backend)
    reason = be.unavailable_reason()
    if reason is not None:
        pytest.skip(f"{backend} is not installed: {reason}")
    table = family_table()
    missing = [
        f"{kind}:{name}"
        for kind, names in (("tool", be.tool_parser_names()), ("reasoning", be.reasoning_parser_names()))
        for name in names
        if table.get(kind, name) is None  # type: ignore[arg-type]
    ]
    assert not missing, f"add these {backend} names to families.toml (as a family or an alias): {missing}"
