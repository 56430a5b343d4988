"""`parse --stream --json` keeps nothing per chunk and no text it was fed, for every builtin
reasoning and tool family: memory does not grow with the output.

The family list comes from the registry (`REASONING_PARSERS`, `TOOL_PARSERS`), so a new family is
measured without touching this file. Two measurements, both of child processes:

- every family, in-process: the stream `parse --stream` makes (`without_history()`; a tool stream
  inside the CLI's `RawCalls` recorder, which keeps fed text from the stream's `open_from()` on)
  is fed 40,000 chunks of 8 characters (320 KB) of that family's output: reasoning (a start
  marker, then lines), or lines with the family's own calls rendered between them. Neither the
  interpreter's allocated blocks (`sys.getallocatedblocks`: a list of the chunks is 40,000) nor
  the bytes allocated and still alive (`tracemalloc`: the text kept as one string is 320 KB) may
  grow with them;
- the command itself on 20 MB, peak RSS under 60 MB, for a representative few: qwen3 (the section
  reasoning stream 24 families share; it peaked at 425 MB before), deepseek_r1 (the think-tag
  stream of 12), hermes (tagged JSON calls), glm45 (the whole-call stream) and sarashina (the one
  format read whole: its call list is held until it closes; 140 MB before).
  Why few: what a 20 MB run finds beyond the in-process measure (the read blocks, the spools, the
  JSON writing) is the same code for every family, and every family at 20 MB would cost ~4 s of
  CPU each here, ~5 min for all 78, too much for `tox -e thorough`'s share of CI's time budget.
  Measured (2026-11-29, 2 cores at load ~17): the in-process test 91 s of CPU (two children; 11 min
  wall), the five 20 MB runs 19 s (6 min wall). Every family measured once at 20 MB by hand
  (1,024-character chunks; reasoning and tool families alike): all under 42 MB but sarashina's
  140 MB, fixed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import parsebridge as pb
from parsebridge.adapters.builtin import REASONING_PARSERS, TOOL_PARSERS
from parsebridge.formats import reasoning_format, tool_format

SRC = str(Path(pb.__file__).resolve().parent.parent)

#: A line of text with `<` in it (so streams take their careful path, not only the fast one).
LINE = "Step {i}: compare a<b, then x<y; so far so good.\n"

_CHILD = r'''
import gc, json, sys, tracemalloc
from parsebridge.cli import stream_output
from parsebridge.cli.stream_output import RawCalls
from parsebridge.formats import reasoning_format, tool_format
from parsebridge.protocol.streams import without_history
import parsebridge as pb

LINE, CHUNKS, SIZE = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# The recorder's bounded windows made small (its spool of raw call texts: 256 KiB in memory, 64 KiB
# pending; fed text kept past what a call can span: 64 KiB), so that what stays is what the stream
# and the recorder keep beyond them.
stream_output.SPOOL_IN_MEMORY = stream_output.COPY_BLOCK = stream_output.TRIM_EVERY = 1024
PREPARE = sys.argv[5] if len(sys.argv) > 5 else ""
exec(PREPARE)


def pieces(kind, name):
    """The family's output, endless: reasoning (a start marker, lines), or lines and calls."""
    i = 0
    if kind == "reasoning":
        try:
            yield reasoning_format(name).start
        except LookupError:  # builtin:think: markers of the caller's choosing (default <think>)
            yield "<think>"
        while True:
            i += 1
            yield LINE.format(i=i)
    region = tool_format(name).render([("get_weather", {"city": "Paris", "n": 5})])
    while True:
        i += 1
        yield "".join(LINE.format(i=i * 20 + k) for k in range(20)) + region + "\n"


def chunks(kind, name):
    rest = ""
    for piece in pieces(kind, name):
        rest += piece
        while len(rest) >= SIZE:
            yield rest[:SIZE]
            rest = rest[SIZE:]


out = {}
for kind, name in json.loads(sys.argv[4]):
    get = pb.get_reasoning_parser if kind == "reasoning" else pb.get_tool_parser
    with without_history():
        stream = get(f"builtin:{name}").stream()
    if kind == "tool":
        stream = RawCalls(stream)
    feed, fed = stream.feed, 0
    source = chunks(kind, name)
    for _ in range(200):  # warm up: the first call, caches
        feed(next(source))
    gc.collect()
    blocks = sys.getallocatedblocks()
    tracemalloc.start()
    for chunk in source:
        feed(chunk)
        fed += 1
        if fed == CHUNKS:
            break
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    out[f"{kind}:{name}"] = [sys.getallocatedblocks() - blocks, kept]
    stream.flush()
    del stream, feed, source
print(json.dumps(out))
'''


def _growth(
    families: list[tuple[str, str]], chunks: int, size: int, prepare: str = ""
) -> dict[str, list[int]]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [LINE, str(chunks), str(size), json.dumps(families), prepare]
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, env=env, timeout=1800
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def _families() -> list[tuple[str, str]]:
    return [("reasoning", n) for n in REASONING_PARSERS] + [("tool", n) for n in TOOL_PARSERS]


#: What a stream may keep after 40,000 chunks (320 KB): noise (a dict resize, a cache entry; the
#: recorder's spool file buffers: 30-46 KB measured at 10,000-80,000 chunks, not growing).
MAX_BLOCKS, MAX_BYTES = 2_000, 128 << 10


@pytest.mark.slow  # ~90 s of CPU in two child processes (see the module's docstring)
def test_no_builtin_stream_grows_with_its_chunks() -> None:
    families = _families()
    halves = [families[0::2], families[1::2]]
    with ThreadPoolExecutor(2) as pool:
        results = [r for part in pool.map(lambda f: _growth(f, 40_000, 8), halves) for r in part.items()]
    assert len(results) == len(families) == len(REASONING_PARSERS) + len(TOOL_PARSERS)
    grown = {name: g for name, g in results if g[0] > MAX_BLOCKS or g[1] > MAX_BYTES}
    assert not grown, f"streams that grew with the chunks fed (blocks, bytes): {grown}"


#: Streams that keep what they are fed, as the section reasoning streams and sarashina did: every
#: chunk in a list, or the text as one string.
_KEEPING_CHUNKS = """
from parsebridge.adapters.builtin.engines import reasoning_sections as _rs
_init = _rs.SectionStream.__init__
def _keeping(self, *a):
    _init(self, *a)
    self._reasoning = []
_rs.SectionStream.__init__ = _keeping
"""
_KEEPING_TEXT = """
from parsebridge.adapters.builtin import sarashina as _s
_feed = _s.SarashinaToolStream._feed
def _keeping(self, text, token_ids):
    self._all = getattr(self, "_all", "") + text
    return _feed(self, text, token_ids)
_s.SarashinaToolStream._feed = _keeping
"""


def test_the_measure_sees_a_stream_that_keeps_what_it_is_fed() -> None:
    """The check can fail: a stream that keeps every chunk grows by a block a chunk, one that
    keeps its text as one string by the text's size (20,000 chunks of 8 characters: 160 KB)."""
    got = _growth([("reasoning", "qwen3")], 20_000, 8, _KEEPING_CHUNKS)
    assert got["reasoning:qwen3"][0] > 15_000, got
    got = _growth([("tool", "sarashina")], 20_000, 8, _KEEPING_TEXT)
    assert got["tool:sarashina"][1] > 150_000 and got["tool:sarashina"][0] < MAX_BLOCKS, got


# ---------------------------------------------------------------- the command, 20 MB


def _write(path: Path, kind: str, name: str, size: int) -> None:
    """Reasoning: a block of 70 % of `size`, then content lines. Tool: lines with the family's
    calls rendered between them, to the end."""
    with path.open("w", encoding="utf-8") as fh:
        if kind == "reasoning":
            fmt = reasoning_format(name)
            start, end, region = fmt.start, fmt.end, ""
        else:
            start, end = "", ""
            region = tool_format(name).render([("get_weather", {"city": "Paris", "n": 5})]) + "\n"
        fh.write(start)
        written, i = len(start), 0
        while written < size:
            if written >= size * 0.7 and end:
                fh.write(end)
                written, end = written + len(end), ""
            piece = "".join(LINE.format(i=i * 20 + k) for k in range(20)) + region
            fh.write(piece)
            written, i = written + len(piece), i + 1


#: VmHWM: the child's own peak (ru_maxrss could carry the size of the process that forked it).
_PEAK = (
    "import re, sys\n"
    "from parsebridge.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "sys.stdout.flush()\n"
    "kb = int(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1))\n"
    "sys.stderr.write(f'MAXRSS_KB {kb}\\n')\n"
    "sys.exit(code)\n"
)


def _peak_mb(args: list[str], cwd: Path) -> float:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with (cwd / f"{args[-2].replace(':', '-')}.json").open("w", encoding="utf-8") as fh:
        p = subprocess.run(
            [sys.executable, "-c", _PEAK, *args],
            cwd=cwd,
            stdout=fh,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=1800,
        )
    assert p.returncode == 0, p.stderr[-3000:]
    return int(p.stderr.rsplit("MAXRSS_KB ", 1)[1]) / 1024


#: The representative few (see the module's docstring).
AT_20_MB = [
    ("reasoning", "qwen3"),
    ("reasoning", "deepseek_r1"),
    ("tool", "hermes"),
    ("tool", "glm45"),
    ("tool", "sarashina"),
]


@pytest.mark.slow  # ~20 s of CPU: five 20 MB parses, two at a time
def test_parse_stream_json_of_20_mb_stays_under_60_mb(tmp_path: Path) -> None:
    runs = []
    for kind, name in AT_20_MB:
        _write(tmp_path / f"{kind}-{name}.txt", kind, name, 20 << 20)
        option = "--reasoning-parser" if kind == "reasoning" else "--tool-parser"
        runs.append(
            [
                "parse",
                "--stream",
                "--json",
                "--chunk-size",
                "1024",
                option,
                f"builtin:{name}",
                f"{kind}-{name}.txt",
            ]
        )
    with ThreadPoolExecutor(2) as pool:
        peaks = dict(zip([r[-2] for r in runs], pool.map(lambda a: _peak_mb(a, tmp_path), runs), strict=True))
    assert all(mb < 60 for mb in peaks.values()), peaks
