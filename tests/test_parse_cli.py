"""`parsebridge parse` as a new user runs it (subprocess): byte-order marks, streamed results, memory."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

import parsebridge as pb
from _builtin_cases import builtin_tool_cases

SRC = str(Path(pb.__file__).resolve().parent.parent)
BOM = b"\xef\xbb\xbf"
CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'


def pb_run(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "parsebridge", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=timeout,
    )


# ---------------------------------------------------------------- a leading byte-order mark


@pytest.mark.parametrize("stream", [[], ["--stream"], ["--stream", "--chunk-size", "1"]])
def test_parse_drops_a_leading_bom(tmp_path: Path, stream: list[str]) -> None:
    (tmp_path / "o.txt").write_bytes(BOM + f"Hi {CALL}".encode())
    p = pb_run("parse", "--tool-parser", "builtin:hermes", "--json", *stream, "o.txt", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)["result"]
    assert result["content"] == "Hi " and result["tool_calls"][0]["name"] == "f"


def test_only_a_leading_bom_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "o.txt").write_bytes(BOM + "a\ufeffb".encode())
    p = pb_run("parse", "--tool-parser", "builtin:hermes", "--json", "o.txt", cwd=tmp_path)
    assert json.loads(p.stdout)["result"]["content"] == "a\ufeffb"


def test_transcripts_with_a_bom_are_read(tmp_path: Path) -> None:
    from parsebridge.conformance.transcripts import iter_transcripts

    (tmp_path / "t.jsonl").write_bytes(BOM + b'{"output": "Hi"}\n')
    (tmp_path / "t.yaml").write_bytes(BOM + b"output: Hi\n")
    (tmp_path / "t.txt").write_bytes(BOM + b"Hi")
    for name in ("t.jsonl", "t.yaml", "t.txt"):
        assert [t.output for t in iter_transcripts(tmp_path / name)] == ["Hi"], name


def test_the_api_takes_text_as_given() -> None:
    """A BOM is a file's encoding signature; text handed to the API is data and is kept."""
    assert pb.get_tool_parser("builtin:hermes").parse("\ufeffHi").content == "\ufeffHi"


# ---------------------------------------------------------------- --stream in bounded memory


def write_output(path: Path, size: int) -> None:
    """A reasoning block, then content lines with a hermes call every 20 lines, to `size` bytes."""
    with path.open("w", encoding="utf-8") as fh:
        head = "<think>" + "let me think about this. " * 200 + "</think>"
        fh.write(head)
        written, i = len(head), 0
        while written < size:
            piece = f"Some content line {i}, ünïcode.\n" * 20
            piece += f'<tool_call>{{"name": "f{i % 7}", "arguments": {{"a": {i}, "b": "x y"}}}}</tool_call>\n'
            fh.write(piece)
            written += len(piece.encode())
            i += 1


# The peak RSS of this process's own memory: VmHWM (reset at exec). ru_maxrss would carry over the
# size of the process that forked it (a test worker of several hundred MB) on Linux.
_MEASURE = (
    "import re, resource, sys\n"
    "from parsebridge.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "try:\n"
    "    kb = int(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1))\n"
    "except (OSError, AttributeError):\n"
    "    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "sys.stderr.write(f'MAXRSS_KB {kb}\\n')\n"
    "sys.exit(code)\n"
)


def peak_rss_mb(args: list[str], cwd: Path, out: Path) -> float:
    """Run `parsebridge ARGS` with stdout to `out`; the process's peak RSS in MB."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with out.open("w", encoding="utf-8") as fh:
        p = subprocess.run(
            [sys.executable, "-c", _MEASURE, *args],
            cwd=cwd,
            stdout=fh,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=1800,
        )
    assert p.returncode == 0, p.stderr
    return int(p.stderr.rsplit("MAXRSS_KB ", 1)[1]) / 1024


#: (lossless: the output has content after its calls, which these tests check is streamed verbatim)
STREAM_ARGS = [
    "parse",
    "--stream",
    "--tool-parser",
    "builtin:hermes",
    "--reasoning-parser",
    "builtin:qwen3",
    "--conventions",
    "lossless",
]


@pytest.mark.slow  # ~9 s of CPU (three 3 MB parses in subprocesses): tox -e thorough runs it (CI)
def test_stream_memory_does_not_grow_with_the_output(tmp_path: Path) -> None:
    """Before: 1 MB -> 68 MB, 4 MB -> 164 MB (every delta kept three times); now flat."""
    write_output(tmp_path / "small.txt", 256 << 10)
    write_output(tmp_path / "big.txt", 3 << 20)
    small = peak_rss_mb([*STREAM_ARGS, "--json", "small.txt"], tmp_path, tmp_path / "s.json")
    big = peak_rss_mb([*STREAM_ARGS, "--json", "big.txt"], tmp_path, tmp_path / "b.json")
    # 12x the input; the calls for the result are spooled too (~4,000: id, name, arguments, raw text).
    assert big - small < 16, (small, big)
    streamed = json.loads((tmp_path / "b.json").read_text(encoding="utf-8"))
    one = pb_run(*[a for a in STREAM_ARGS if a != "--stream"], "--json", "big.txt", cwd=tmp_path)
    oneshot = json.loads(one.stdout)
    for res in (streamed["result"], oneshot["result"]):
        for call in res["tool_calls"]:
            call.pop("id")
    assert streamed["result"] == oneshot["result"]
    assert streamed["message"]["content"] == oneshot["message"]["content"]
    assert streamed["message"]["reasoning_content"] == oneshot["message"]["reasoning_content"]


def test_stream_table_prints_long_text_verbatim(tmp_path: Path) -> None:
    write_output(tmp_path / "o.txt", 1 << 20)
    table = pb_run(*STREAM_ARGS, "o.txt", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    body = (tmp_path / "o.txt").read_text(encoding="utf-8")
    lines = "".join(body.split("</think>", 1)[1].splitlines(keepends=True)[:20])
    assert lines in table.stdout  # as they are: not wrapped or boxed line by line
    assert "non-empty deltas streamed" in table.stdout or "1 non-empty delta streamed" in table.stdout
    # past 500 calls: one line each (#, id, name, arguments), not a table laid out in memory
    assert '\tf0\t{"a": 0, "b": "x y"}\n' in table.stdout


@pytest.mark.slow
def test_stream_memory_is_flat_from_1_to_50_mb(tmp_path: Path) -> None:
    """Peak RSS bounded by the largest call and chunk, not the input (issue 40 item 14; the figures:
    benchmarks/stream_memory.py). Measured at 1/8/50 MB: 41/50/90 MB when every call was kept for the
    result; 41/47/53 MB with them spooled but the builtin stream's list of call spans kept (+6 MB from
    8 to 50 MB); 38.6/39.2/39.1 MB with each span let go once its raw text is spooled
    (`release_calls`), the spools' memory part and the input's read block at 256 KiB (what made
    1 MB differ from 8: the 1 MB output was one read block and fit in its spools)."""
    write_output(tmp_path / "small.txt", 1 << 20)
    write_output(tmp_path / "mid.txt", 8 << 20)
    write_output(tmp_path / "o.txt", 50 << 20)
    args = [*STREAM_ARGS, "--chunk-size", "64", "--json"]
    small = peak_rss_mb([*args, "small.txt"], tmp_path, tmp_path / "s.json")
    mid = peak_rss_mb([*args, "mid.txt"], tmp_path, tmp_path / "m.json")
    big = peak_rss_mb([*args, "o.txt"], tmp_path, tmp_path / "o.json")
    assert big - mid < 2, (small, mid, big)  # (with every span kept: +6 MB)
    assert big - small < 4, (small, mid, big)  # (+12 MB)
    table = peak_rss_mb([*STREAM_ARGS, "--chunk-size", "64", "o.txt"], tmp_path, tmp_path / "o.table")
    assert table - small < 4, (small, table)


def _seconds(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    with (cwd / "out").open("w", encoding="utf-8") as fh:
        p = subprocess.run([sys.executable, "-m", "parsebridge", *args], cwd=cwd, stdout=fh, timeout=1800)
    assert p.returncode == 0
    return time.perf_counter() - start


@pytest.mark.slow
def test_the_table_view_costs_at_most_twice_the_json(tmp_path: Path) -> None:
    """`parse` on a big output: the table within 2x of --json, one-shot and streamed (issue 40 item
    13: 18.6 s against 1.3 s on 20 MB when Rich laid out the text; measured on this tree at 20 MB,
    loaded machine: one-shot table 14.1 s / json 21.2 s, streamed 298 s / 311 s)."""
    write_output(tmp_path / "o.txt", 8 << 20)
    one = [a for a in STREAM_ARGS if a != "--stream"]
    assert _seconds([*one, "o.txt"], tmp_path) < 2 * _seconds([*one, "--json", "o.txt"], tmp_path)
    streamed = [*STREAM_ARGS, "--chunk-size", "64"]
    assert _seconds([*streamed, "o.txt"], tmp_path) < 2 * _seconds([*streamed, "--json", "o.txt"], tmp_path)


def test_streams_made_without_history_keep_nothing_but_stream_the_same() -> None:
    from parsebridge.protocol.streams import without_history

    text = f'<think>why\n</think>Hi {CALL} there "\u00e9\U0001f600'
    pipe = pb.get_pipeline("builtin:qwen3", "builtin:hermes", conventions="lossless")

    def run(stream: object) -> list[dict[str, object]]:
        out = [stream.feed(text[i : i + 3]) for i in range(0, len(text), 3)]  # type: ignore[attr-defined]
        out.append(stream.flush())  # type: ignore[attr-defined]
        return [d.to_openai() for d in out if d]

    kept = pipe.stream()
    with without_history():
        bare = pipe.stream()
    got = run(bare)
    assert [{k: v for k, v in d.items() if k != "tool_calls"} for d in got] == [
        {k: v for k, v in d.items() if k != "tool_calls"} for d in run(kept)
    ]
    assert bare.finish().content is None and bare.finish().tool_calls == []
    assert kept.finish().content == 'Hi  there "\u00e9\U0001f600'
    assert bare.block is not None and bare.block.start_marker == "<think>"
    assert pipe.stream().accumulator.keeps_history  # only inside the block


def test_input_blocks_are_recut_into_chunks_of_the_size_asked() -> None:
    from parsebridge.cli.parse_command import _chunks

    rng = random.Random(7)
    for _ in range(2000):
        text = "".join(rng.choice("ab\u00e9\n") for _ in range(rng.randrange(0, 40)))
        cuts = sorted(rng.sample(range(1, len(text)), min(5, max(len(text) - 1, 0))))
        blocks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True) if b > a]
        size = rng.randrange(1, 9)
        want = [text[i : i + size] for i in range(0, len(text), size)]
        assert list(_chunks(iter(blocks), size)) == want, (blocks, size)


def test_delta_lines_are_the_openai_json() -> None:
    from parsebridge.cli.stream_output import delta_line
    from parsebridge.protocol.models import ToolCallDelta, make_delta

    for d in (
        make_delta('a "quoted"\n\u00e9\U0001f600\x00'),
        make_delta("", "why\t"),
        make_delta("x", "y"),
        make_delta("", "", [ToolCallDelta(index=0, id="c", name="f", arguments='{"a"')]),
    ):
        assert delta_line(d) == json.dumps(d.to_openai(), ensure_ascii=False)


# ---------------------------------------------------------------- raw_text of streamed calls


def test_streamed_json_carries_each_calls_raw_text(tmp_path: Path) -> None:
    text = f"<think>hmm</think>Hi {CALL} and {CALL.replace('f', 'g', 1)} done"
    (tmp_path / "o.txt").write_text(text, encoding="utf-8")
    args = ["parse", "--json", "--tool-parser", "builtin:hermes", "--reasoning-parser", "builtin:qwen3"]
    one = json.loads(pb_run(*args, "o.txt", cwd=tmp_path).stdout)["result"]["tool_calls"]
    assert [c["raw_text"] for c in one] == [CALL, CALL.replace("f", "g", 1)]
    for size in ("1", "3", "7", "1000"):
        p = pb_run(*args, "--stream", "--chunk-size", size, "o.txt", cwd=tmp_path)
        streamed = json.loads(p.stdout)["result"]["tool_calls"]
        assert [c["raw_text"] for c in streamed] == [c["raw_text"] for c in one], size


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_a_stream_that_leaves_text_out_says_so(tmp_path: Path, extra: list[str]) -> None:
    """`parse` showed the text after the call ('left out of the content'); `parse --stream` showed
    nothing of it, in the table or in --json's result, and said nothing: it was lost to the reader."""
    (tmp_path / "o.txt").write_text(f"Hi {CALL} and more", encoding="utf-8")
    (tmp_path / "clean.txt").write_text(f"Hi {CALL}", encoding="utf-8")
    args = ["parse", "--tool-parser", "builtin:hermes", *extra]
    one = pb_run(*args, "o.txt", cwd=tmp_path)
    assert " and more" in one.stdout
    p = pb_run(*args, "--stream", "--chunk-size", "3", "o.txt", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "warning: the tool parser left text out of the content" in p.stderr
    assert "parse without --stream shows it" in p.stderr
    clean = pb_run(*args, "--stream", "clean.txt", cwd=tmp_path)
    assert clean.returncode == 0 and "warning" not in clean.stderr
    lossless = pb_run(*args, "--stream", "--conventions", "lossless", "o.txt", cwd=tmp_path)
    assert lossless.returncode == 0 and "warning" not in lossless.stderr


@pytest.mark.parametrize("size", [1, 4, 17])
def test_raw_calls_match_one_shot_for_every_builtin_fixture(size: int) -> None:
    """The recorder cuts each call out of the text the tool stream was fed, as `parse` does."""
    from parsebridge.cli.stream_output import RawCalls
    from parsebridge.protocol.streams import without_history

    checked = 0
    for spec, text in builtin_tool_cases():
        parser = pb.get_tool_parser(spec)
        want = [c.raw_text for c in parser.parse(text).tool_calls]
        with without_history():
            rec = RawCalls(parser.stream())
        for i in range(0, len(text), size):
            rec.feed(text[i : i + size])
            # each span let go once its raw text is spooled (`release_calls`)
            assert not hasattr(rec.stream, "release_calls") or not rec.stream.call_spans, spec
        rec.flush()
        assert list(rec.texts) == want, (spec, text)
        checked += bool(want)
    assert checked > 100


@pytest.mark.framework
@pytest.mark.parametrize("framework", ["vllm", "sglang"])
def test_framework_streams_keep_their_located_block(tmp_path: Path, framework: str) -> None:
    import importlib.util

    if importlib.util.find_spec(framework) is None:
        pytest.skip(f"needs {framework}")
    (tmp_path / "o.txt").write_text(f"<think>hmm</think>Hi {CALL}", encoding="utf-8")
    args = ["parse", "--json", "--reasoning-parser", f"{framework}:qwen3", "--tool-parser", "builtin:hermes"]
    one = json.loads(pb_run(*args, "o.txt", cwd=tmp_path).stdout)["result"]
    streamed = json.loads(pb_run(*args, "--stream", "--chunk-size", "5", "o.txt", cwd=tmp_path).stdout)[
        "result"
    ]
    # A framework stream locates its block in the text it kept, by the reasoning it streamed: made
    # without history it would have none (null). vLLM 0.33's qwen3 streams this output differently
    # from its one-shot parse (all of it as reasoning): its own block, located.
    # vLLM 0.11's qwen3 stream finds reasoning by token ids only: fed text, it streams none, and a
    # stream that showed no reasoning has no block to locate.
    if streamed["reasoning"] is None:
        assert framework == "vllm" and streamed["block"] is None and one["reasoning"] == "hmm"
        return
    assert streamed["block"] is not None and streamed["block"]["located"]
    if framework == "sglang":
        assert streamed["block"] == one["block"]
        raw = [c["raw_text"] for c in streamed["tool_calls"]]
        assert raw == [CALL] == [c["raw_text"] for c in one["tool_calls"]]


def test_ctrl_c_during_a_streamed_json_parse_ends_the_object(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C during `parse --stream --json` left stdout cut inside the deltas array (not JSON, so
    `| jq` read nothing of what was streamed); the object now ends with its error, as it does when
    a parser fails part way, and the exit status is 130."""
    from parsebridge.cli import parse_command
    from parsebridge.cli.commands import main

    (tmp_path / "o.txt").write_text(f"Hi {CALL} and {CALL}", encoding="utf-8")
    chunks = parse_command._chunks

    def interrupted(*args: object) -> object:
        for i, piece in enumerate(chunks(*args)):  # type: ignore[arg-type]
            if i == 40:  # (past the first call: 80 characters)
                raise KeyboardInterrupt
            yield piece

    monkeypatch.setattr(parse_command, "_chunks", interrupted)
    code = main(
        [
            "parse",
            "--tool-parser",
            "builtin:hermes",
            "--stream",
            "--chunk-size",
            "2",
            "--json",
            str(tmp_path / "o.txt"),
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 130
    assert out["error"] == {"type": "KeyboardInterrupt", "message": "interrupted (Ctrl-C)"}
    assert "".join(d.get("content") or "" for d in out["deltas"]) == "Hi "
    assert [c["function"]["name"] for d in out["deltas"] for c in d.get("tool_calls", [])] == ["f"]
