"""FunctionGemma: ``<start_function_call>call:NAME{key:<escape>text<escape>,n:5}<end_function_call>``."""

from __future__ import annotations

from .gemma4 import call_renderer, gemma_format

START, END = "<start_function_call>", "<end_function_call>"
STRING = "<escape>"
RESULT_START, RESULT_END = "<start_function_response>", "<end_function_response>"

render_call = call_renderer(START, END, STRING)


TOOL = gemma_format(
    "functiongemma",
    "`<start_function_call>call:NAME{key:<escape>text<escape>,n:5}<end_function_call>` (Gemma's argument syntax)",
    (START, END, STRING),
    (RESULT_START, RESULT_END),
)
#: ``<start_function_response>response:NAME{…}<end_function_response>`` as the FunctionGemma template
#: writes it (no call ids: pass the function's name as `tool_call_id`).
format_tool_result = TOOL.format_tool_result
