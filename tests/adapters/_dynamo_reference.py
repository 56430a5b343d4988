"""Dynamo's frontend driven over HTTP with no parsebridge code: the reference for `dynamo:` readings.

Run as a script (its own process, its own Dynamo runtime): reads a JSON job on
stdin — models (name → [reasoning parser, tool parser]), the model folder
(its tokenizer; files only, read by Dynamo), and cases (the engine's steps as
lists of token ids: for the non-streamed request and per stream chunking;
tools; the generation prompt) — and writes, per case, the non-streamed message
and, per chunking, what a client assembles from the plain streamed answer
(one engine step per list, all steps yielded back to back, ``n=1``). The user
message is the script's key, then the prompt, on the next line: the folder's
chat template renders it as is, and the engine reads the prompt's ids back
with the folder's byte-level vocabulary (`read_prompt`: one token per byte, or
a real model's). Without a folder it writes its own: one token per byte,
nothing added. Only the standard library and Dynamo are imported.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from typing import Any

SCRIPTS: dict[str, list[list[int]]] = {}
TASKS: list[Any] = []  # the served endpoints and the HTTP service, kept referenced
VOCAB: dict[int, bytes] = {}  # the folder's tokens as bytes (`read_vocabulary`)


def byte_chars() -> dict[str, int]:
    """The byte-level alphabet (GPT-2's): the character that spells each byte in a tokenizer.json."""
    visible = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars, extra = list(visible), 0
    for b in range(256):
        if b not in visible:
            visible.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(visible, chars, strict=True)}


def read_vocabulary(folder: str) -> None:
    """The token → bytes table of the folder's byte-level tokenizer.json (added tokens as their text)."""
    with open(os.path.join(folder, "tokenizer.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    byte_of = byte_chars()
    for piece, token_id in data["model"]["vocab"].items():  # a piece outside the table: its own text
        known = all(ch in byte_of for ch in piece)
        VOCAB[int(token_id)] = bytes(byte_of[ch] for ch in piece) if known else piece.encode()
    for tok in data.get("added_tokens") or ():
        VOCAB[int(tok["id"])] = tok["content"].encode()


def read_prompt(token_ids: list[int]) -> str:
    return b"".join(VOCAB.get(t, b"") for t in token_ids).decode("utf-8", "replace")


def tokenizer_folder() -> str:
    folder = tempfile.mkdtemp(prefix="dynamo-reference-")
    vocab = byte_chars()
    level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    eos = {"id": 256, "content": "<eos>", "single_word": False, "lstrip": False, "rstrip": False,
           "normalized": False, "special": True}  # fmt: skip
    files = {
        "tokenizer.json": {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": [eos], "normalizer": None,
            "pre_tokenizer": level, "post_processor": None, "decoder": level,
            "model": {"type": "BPE", "vocab": vocab, "merges": [], "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": False,
                      "byte_fallback": False, "ignore_merges": False},
        },
        "config.json": {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": 257,
                        "eos_token_id": 256, "bos_token_id": 256},
        "tokenizer_config.json": {"eos_token": "<eos>", "bos_token": "<eos>",
                                  "chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"},
    }  # fmt: skip
    for name, data in files.items():
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            json.dump(data, fh)
    return folder


async def generate(request: dict[str, Any], context: Any = None) -> Any:
    text = read_prompt(request.get("token_ids", []))
    key = text.split()[0] if text.split() else ""
    for step in SCRIPTS.pop(key, []):
        yield {"token_ids": step}
    yield {"token_ids": [], "finish_reason": "stop"}


async def start(models: dict[str, list[str | None]], folder: str, port: int) -> Any:
    from dynamo.llm import (
        EngineType,
        EntrypointArgs,
        ModelInput,
        ModelRuntimeConfig,
        ModelType,
        make_engine,
        register_model,
        run_input,
    )
    from dynamo.runtime import DistributedRuntime

    runtime = DistributedRuntime(asyncio.get_running_loop(), "mem", "tcp")
    for name, (reasoning, tool) in models.items():
        endpoint = runtime.endpoint(f"reference.{name}.generate")
        TASKS.append(asyncio.ensure_future(endpoint.serve_endpoint(generate)))
        config = ModelRuntimeConfig()
        if reasoning:
            config.reasoning_parser = reasoning
        if tool:
            config.tool_call_parser = tool
        kwargs: dict[str, Any] = {"runtime_config": config}
        try:
            from dynamo.llm import WorkerType

            kwargs["worker_type"] = WorkerType.Aggregated
        except ImportError:
            pass
        await register_model(ModelInput.Tokens, ModelType.Chat, endpoint, folder, name, **kwargs)
    engine = await make_engine(
        runtime, EntrypointArgs(EngineType.Dynamic, http_host="127.0.0.1", http_port=port)
    )
    TASKS.append(asyncio.ensure_future(run_input(runtime, "http", engine)))
    return runtime


def post(port: int, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.read().decode()


def assemble(sse: str) -> dict[str, Any]:
    """What an OpenAI client assembles from a streamed answer."""
    content, reasoning, calls = [], [], {}  # type: ignore[var-annotated]
    for line in sse.splitlines():
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        for choice in json.loads(line[5:]).get("choices", []):
            d = choice.get("delta") or {}
            content.append(d.get("content") or "")
            reasoning.append(d.get("reasoning_content") or "")
            for tc in d.get("tool_calls") or []:
                call = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                fn = tc.get("function") or {}
                call["name"] += fn.get("name") or ""
                call["arguments"] += fn.get("arguments") or ""
    return {
        "content": "".join(content),
        "reasoning": "".join(reasoning),
        "calls": [[c["name"], c["arguments"]] for _, c in sorted(calls.items())],
    }


def run(job: dict[str, Any], port: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n, case in enumerate(job["cases"]):
        base = {"model": case["model"], **({"tools": case["tools"]} if case["tools"] else {})}
        tail = f"\n{case['prompt']}" if case.get("prompt") else ""
        key = f"k{n}-oneshot"
        SCRIPTS[key] = case["oneshot"]
        message = json.loads(post(port, {**base, "messages": [{"role": "user", "content": key + tail}]}))
        result = {"oneshot": message["choices"][0]["message"]}
        for chunking, steps in case["streams"].items():
            key = f"k{n}-{chunking}"
            SCRIPTS[key] = steps
            body = {**base, "messages": [{"role": "user", "content": key + tail}], "stream": True}
            result[chunking] = assemble(post(port, body))
        out[case["id"]] = result
    return out


def main() -> None:
    job = json.load(sys.stdin)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    folder = job.get("folder") or tokenizer_folder()
    read_vocabulary(folder)
    runtime = asyncio.run_coroutine_threadsafe(start(job["models"], folder, port), loop).result(60)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # every model listed
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as resp:
                listed = {m["id"] for m in json.load(resp)["data"]}
            if set(job["models"]) <= listed:
                break
        except OSError:
            pass
        time.sleep(0.05)
    json.dump(run(job, port), sys.stdout)
    sys.stdout.flush()
    runtime.shutdown()
    os._exit(0)


if __name__ == "__main__":
    main()
