"""A server-in-the-loop oracle: vLLM's and SGLang's own chat servers driven with a scripted engine.

    from _server_oracle import common, vllm, sglang
    script = common.Script(chunks=[(text, ids), ...], finish_reason="stop")
    server_run = vllm.run("qwen3", "hermes", tokenizer, script, tools=tools, tool_choice="auto")
    server_run.message, server_run.deltas, server_run.finish_reason

`vllm.run` / `sglang.run` take the framework's own registered parser names
(so a parser registered as a plugin in the framework works the same way), a
tokenizer, and a `Script`; they return a `common.Run` read from the SSE the
framework's serving code produced. `common.parsebridge_run` gives the same
`Run` for parsebridge's `OutputProcessor`; `common.describe` names the
difference between two runs. See tests/serving/test_server_oracle_*.py.
"""
