"""A server-in-the-loop oracle: vLLM's and SGLang's own chat servers driven with a scripted engine.

    from _server_oracle import common, sglang, vllm

    chunks = common.chunked(processor, text, "tok1", tools)      # or [(text, ids), ...] of your own
    script = common.Script(chunks, finish_reason="stop")          # eos_ids=[...] / "length" endings
    got = vllm.run("qwen3", "hermes", tokenizer, script, tools=tools, tool_choice="auto")
    got.message, got.deltas, got.finish_reason                     # what a client received (choice 0)
    ours = common.parsebridge_run(processor, script, tools=tools, tool_choice="auto")
    common.describe(got, ours)                                     # "equal", or where they differ

`vllm.run` / `sglang.run` take the framework's own registered parser names
(a parser registered in the framework as a plugin works the same way), the
tokenizer both sides use (`common.tokenizer_of(processor)`), and a `Script`;
they return a `common.Run` read back from the SSE the framework's serving
code produced — no framework loop is restated here. `sglang.run` takes
`reasoning_started` (the chat template opened reasoning), `vllm.run` reads
it from `Script.prompt_token_ids`. `oracle.compare(case, scenario)` runs one
bundled-fixture case on both sides; `oracle.probe(framework)` says why a
release's server cannot be driven. Tests: tests/serving/test_server_oracle_*.py.
"""
