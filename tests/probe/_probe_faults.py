"""A fault-injecting proxy in front of a real OpenAI-compatible server (run as a script).

    python _probe_faults.py --upstream http://127.0.0.1:8000 --fault missing-index --port 9000

Every request goes to the upstream server; the answer comes back with one fault injected the
way deployments have been seen to break it:

* ``missing-index`` — streamed tool-call deltas lose their ``index``;
* ``args-before-name`` — a streamed call's name moves from its first delta to its last;
* ``leaked-marker`` — ``<tool_call>`` is put in front of the content (both modes);
* ``stream-differs`` — the streamed answer drops its last call (non-streamed untouched);
* ``ignored-forced`` — ``tool_choice`` is dropped from the request before it goes upstream;
* ``cumulative-deltas`` — each streamed content, reasoning and argument delta carries all the
  text so far instead of what is new;
* ``repeated-last`` — the streamed content and each call's arguments come as they were, then once
  more whole in a last delta;
* ``none`` — nothing changes (the proxy itself must not break anything).
"""

from __future__ import annotations

import argparse
import copy
import json
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

FAULTS = (
    "none",
    "missing-index",
    "args-before-name",
    "leaked-marker",
    "stream-differs",
    "ignored-forced",
    "cumulative-deltas",
    "repeated-last",
)
MARKER = "<tool_call>"


def _call_deltas(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        part
        for e in events
        for c in e.get("choices") or []
        for part in (c.get("delta") or {}).get("tool_calls") or []
    ]


def _stream_fault(fault: str, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    events = copy.deepcopy(events)
    parts = _call_deltas(events)
    if fault == "missing-index":
        for part in parts:
            part.pop("index", None)
    elif fault == "args-before-name":
        for index in {p.get("index") for p in parts}:
            mine = [p for p in parts if p.get("index") == index]
            name = (mine[0].get("function") or {}).pop("name", None)
            if len(mine) > 1:
                mine[-1].setdefault("function", {})["name"] = name
            else:  # (a call in one delta, as builtin streams show a whole call: the name comes after it)
                events = _name_after(events, mine[0], name)
    elif fault == "leaked-marker":
        first = {"choices": [{"index": 0, "delta": {"content": MARKER}, "finish_reason": None}]}
        events.insert(1 if len(events) > 1 else 0, {**events[0], **first} if events else first)
    elif fault == "stream-differs" and parts:
        last = max(p.get("index", 0) for p in parts)
        for e in events:
            for c in e.get("choices") or []:
                delta = c.get("delta") or {}
                if delta.get("tool_calls"):
                    delta["tool_calls"] = [p for p in delta["tool_calls"] if p.get("index") != last]
    elif fault == "cumulative-deltas":
        _cumulative(events)
    elif fault == "repeated-last":
        events = _repeated_last(events)
    return events


def _repeated_last(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`events` with one more event before the last, carrying all the content and each call's
    arguments again, whole (a server that sends its final text once more at the end)."""
    content = "".join(
        (c.get("delta") or {}).get("content") or "" for e in events for c in e.get("choices") or []
    )
    args: dict[Any, str] = {}
    for part in _call_deltas(events):
        args[part.get("index")] = args.get(part.get("index"), "") + (
            (part.get("function") or {}).get("arguments") or ""
        )
    delta: dict[str, Any] = {}
    if content:
        delta["content"] = content
    if args:
        delta["tool_calls"] = [{"index": i, "function": {"arguments": a}} for i, a in args.items() if a]
    if not delta or not events:
        return events
    again = {**events[-1], "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    return [*events[:-1], again, events[-1]]


def _cumulative(events: list[dict[str, Any]]) -> None:
    """Each text delta of `events` replaced, in place, by all of that text so far."""
    so_far: dict[Any, str] = {}

    def grown(key: Any, text: Any) -> Any:
        if not isinstance(text, str) or not text:
            return text
        so_far[key] = so_far.get(key, "") + text
        return so_far[key]

    for e in events:
        for c in e.get("choices") or []:
            delta = c.get("delta") or {}
            for field in ("content", "reasoning_content", "reasoning"):
                if field in delta:
                    delta[field] = grown(field, delta[field])
            for part in delta.get("tool_calls") or []:
                fn = part.get("function") or {}
                if "arguments" in fn:
                    fn["arguments"] = grown(("args", part.get("index")), fn["arguments"])


def _name_after(events: list[dict[str, Any]], part: dict[str, Any], name: Any) -> list[dict[str, Any]]:
    """`events` with an event naming `part`'s call right after the event that holds `part`."""
    out: list[dict[str, Any]] = []
    for e in events:
        out.append(e)
        if any(
            part is p for c in e.get("choices") or [] for p in (c.get("delta") or {}).get("tool_calls") or []
        ):
            late = {"index": part.get("index"), "function": {"name": name}}
            out.append(
                {**e, "choices": [{"index": 0, "delta": {"tool_calls": [late]}, "finish_reason": None}]}
            )
    return out


def _message_fault(fault: str, body: Any) -> Any:
    if fault == "leaked-marker" and isinstance(body, dict) and body.get("choices"):
        message = body["choices"][0].setdefault("message", {})
        message["content"] = MARKER + (message.get("content") or "")
    return body


def build_app(upstream: str, fault: str) -> Starlette:
    async def forward(request: Request) -> Response:
        body = await request.json()
        if fault == "ignored-forced":
            body.pop("tool_choice", None)
        async with httpx.AsyncClient(timeout=120.0) as client:
            answer = await client.post(f"{upstream}{request.url.path}", json=body)
        if answer.status_code != 200:
            return Response(answer.content, answer.status_code, media_type=answer.headers.get("content-type"))
        if not body.get("stream"):
            return JSONResponse(_message_fault(fault, answer.json()))
        lines = [ln[5:].strip() for ln in answer.text.splitlines() if ln.startswith("data:")]
        events = [json.loads(ln) for ln in lines if ln != "[DONE]"]
        out = "".join(f"data: {json.dumps(e)}\n\n" for e in _stream_fault(fault, events)) + "data: [DONE]\n\n"
        return Response(out, media_type="text/event-stream")

    async def models(request: Request) -> Response:
        async with httpx.AsyncClient(timeout=30.0) as client:
            answer = await client.get(f"{upstream}{request.url.path}")
        return Response(answer.content, answer.status_code, media_type="application/json")

    return Starlette(
        routes=[Route("/v1/chat/completions", forward, methods=["POST"]), Route("/v1/models", models)]
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--fault", choices=FAULTS, required=True)
    ap.add_argument("--port", type=int, required=True)
    args = ap.parse_args()
    uvicorn.run(
        build_app(args.upstream.rstrip("/"), args.fault),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
