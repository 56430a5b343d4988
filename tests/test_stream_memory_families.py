"""No builtin stream keeps something per chunk: memory does not grow with the output, for every
builtin reasoning and tool family, also without history (what `parse --stream` runs).

Two measurements, both of child processes:

- every family: a stream made `without_history()` is fed 40,000 chunks of 8 characters (320 KB)
  of that family's output; the interpreter's allocated blocks (`sys.getallocatedblocks`) and its
  resident memory must not grow with them (a list of the chunks, what the section reasoning
  streams kept, is 40,000 blocks and ~2.5 MB);
- `parsebridge parse --stream --json` on 20 MB of output for reasoning families that grew before
  (qwen3, glm45, kimi_k2, nemotron_v3): peak RSS under 60 MB.

Measured before the fix (20 MB, 4 characters a chunk): builtin:qwen3 peaked at 425 MB.
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

SRC = str(Path(pb.__file__).resolve().parent.parent)

#: A line of text with `<` in it (so streams take their careful path, not only the fast one).
LINE = "Step {i}: compare a<b, then x<y; so far so good.\n"
#: Tool families whose calls are one literal read at the end of output (Sarashina's Python list:
#: its end is where the last closing bracket still parses): the text after the marker is held to
#: the end by design, so their output is content, then one call list.
READ_AT_END = {"sarashina"}

_CHILD = r'''
import gc, json, sys
from parsebridge.adapters.builtin import REASONING_PARSERS, TOOL_PARSERS
from parsebridge.formats import reasoning_format, tool_format
from parsebridge.protocol.streams import without_history
import parsebridge as pb

LINE, READ_AT_END = sys.argv[1], set(json.loads(sys.argv[2]))
CHUNKS, SIZE = int(sys.argv[3]), int(sys.argv[4])


def rss_kb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4


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
    if name in READ_AT_END:
        for _ in range(CHUNKS * SIZE // len(LINE) + 1):
            i += 1
            yield LINE.format(i=i)
        yield region
        return
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
for kind, name in json.loads(sys.argv[5]):
    get = pb.get_reasoning_parser if kind == "reasoning" else pb.get_tool_parser
    with without_history():
        stream = get(f"builtin:{name}").stream()
    feed, fed = stream.feed, 0
    source = chunks(kind, name)
    for _ in range(200):  # warm up: the first call, caches
        feed(next(source))
    gc.collect()
    blocks, rss = sys.getallocatedblocks(), rss_kb()
    for chunk in source:
        feed(chunk)
        fed += 1
        if fed == CHUNKS:
            break
    gc.collect()
    out[f"{kind}:{name}"] = [sys.getallocatedblocks() - blocks, (rss_kb() - rss) / 1024]
    stream.finish()
    del stream, feed, source
print(json.dumps(out))
'''


def _growth(families: list[tuple[str, str]], chunks: int, size: int) -> dict[str, list[float]]:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [LINE, json.dumps(sorted(READ_AT_END)), str(chunks), str(size), json.dumps(families)]
    p = subprocess.run(
        [sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, env=env, timeout=900
    )
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout)


def _families() -> list[tuple[str, str]]:
    return [("reasoning", n) for n in REASONING_PARSERS] + [("tool", n) for n in TOOL_PARSERS]


@pytest.mark.slow  # ~1 min on 2 cores: every builtin family, 40,000 chunks each, two child processes
def test_no_builtin_stream_grows_with_its_chunks() -> None:
    families = _families()
    halves = [families[0::2], families[1::2]]
    with ThreadPoolExecutor(2) as pool:
        results = [r for part in pool.map(lambda f: _growth(f, 40_000, 8), halves) for r in part.items()]
    assert len(results) == len(families)
    # A list of the chunks would be 40,000 blocks and ~2.5 MB; what remains is noise (a dict resize).
    grown = {name: g for name, g in results if g[0] > 2_000 or g[1] > 1.5}
    assert not grown, f"streams that grew with the chunks fed (blocks, MB): {grown}"


def test_the_measure_sees_a_stream_that_keeps_its_chunks() -> None:
    """The check can fail: a section stream that keeps every chunk (as it did before) grows by one
    block per chunk (the child runs `_KEEPING` first: the old behaviour)."""
    code = _CHILD.replace("out = {}", "out = {}\n" + _KEEPING)
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    args = [LINE, "[]", "20000", "8", json.dumps([["reasoning", "qwen3"]])]
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    blocks, _ = json.loads(p.stdout)["reasoning:qwen3"]
    assert blocks > 15_000, blocks


#: A section stream that keeps every chunk whatever the history setting (the old behaviour).
_KEEPING = """
from parsebridge.adapters.builtin.engines import reasoning_sections as _rs
_init = _rs.SectionStream.__init__
def _keeping(self, *a):
    _init(self, *a)
    self._reasoning = []
_rs.SectionStream.__init__ = _keeping
"""


# ---------------------------------------------------------------- the command, 20 MB


def _write_reasoning(path: Path, start: str, end: str, size: int) -> None:
    """A reasoning block of 70 % of `size`, then content lines."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write(start)
        written, i = len(start), 0
        while written < size:
            if written >= size * 0.7 and end:
                fh.write(end)
                written, end = written + len(end), ""
            line = LINE.format(i=i) * 50
            fh.write(line)
            written, i = written + len(line), i + 1


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
            timeout=900,
        )
    assert p.returncode == 0, p.stderr[-3000:]
    return int(p.stderr.rsplit("MAXRSS_KB ", 1)[1]) / 1024


@pytest.mark.slow  # ~1 min: four 20 MB parses, 1,024 characters a chunk, two at a time
def test_parse_stream_json_of_20_mb_stays_under_60_mb(tmp_path: Path) -> None:
    from parsebridge.formats import reasoning_format

    runs = []
    for name in ("qwen3", "glm45", "kimi_k2", "nemotron_v3"):
        fmt = reasoning_format(name)
        _write_reasoning(tmp_path / f"{name}.txt", fmt.start, fmt.end, 20 << 20)
        args = ["parse", "--stream", "--json", "--chunk-size", "1024", "--reasoning-parser"]
        runs.append([*args, f"builtin:{name}", f"{name}.txt"])
    with ThreadPoolExecutor(2) as pool:
        peaks = dict(zip([r[-2] for r in runs], pool.map(lambda a: _peak_mb(a, tmp_path), runs), strict=True))
    assert all(mb < 60 for mb in peaks.values()), peaks
