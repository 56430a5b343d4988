"""Think-tag reasoning: ``<think>…</think>`` (Qwen3, DeepSeek-R1 and many others).

A think-tag family is data: its start/end markers, whether the chat template
opens reasoning (the output then starts inside it), and the tool-section
markers that end reasoning when a model calls a tool without closing it.

Start state — where vLLM 0.33 and SGLang 0.5.23 disagree, and what we chose:
vLLM's parser engine starts most families inside reasoning unless
``enable_thinking``/``thinking`` is false, so marker-free output is
reasoning; SGLang's detectors mostly start outside it unless forced. We take
the start state from the chat template: ``starts_in_prompt`` is True only
where the template opens the block when thinking is on (DeepSeek-R1, Step3,
MiniMax-M2, Nemotron 3, Granite 4.2 thinking, Olmo 3 Think, PLaMo 3,
MiniCPM-V, DeepSeek-V4, K2 Horizon, Holo2, IQuest) or where the model
starts thinking without writing the start marker (Kimi K2 thinking / K2.5,
Seed-OSS, as vLLM's parser tests describe them). Elsewhere (GLM, MiMo, Ling3,
Poolside, Gemma 4, Apertus, DeepSeek-V3.1 with thinking off by default)
the output opens the block itself. Callers that know better pass
``reasoning_started=`` or the rendered ``prompt=``.
"""

from __future__ import annotations

import re
from typing import Any

from . import deepseek_v4 as _deepseek_v4
from . import deepseek_v41 as _deepseek_v41
from . import dots as _dots
from . import gemma4 as _gemma4
from . import glm45 as _glm45
from . import internlm as _internlm
from . import kimi_k2 as _kimi_k2
from . import minimax_m2 as _minimax_m2
from . import qwen3_coder as _qwen3_coder
from . import seed_oss as _seed_oss
from ._base import ReasoningFormat

START, END = "<think>", "</think>"


def think_tags(family: str, summary: str, **facts: Any) -> ReasoningFormat:
    """A family that reasons in ``<think>…</think>``, with its own `facts` (start state, closers, …).

    ``drop_later_ends=True`` where vLLM's parser drops a stray end marker after the one that
    closed reasoning.
    """
    return ReasoningFormat(family=family, summary=summary, start=START, end=END, **facts)


#: What follows ``<tool_call>`` where it opens a call: a JSON object or list (Hermes, Qwen3, Granite), a
#: ``<function=`` (Qwen3-Coder), or a name then a key or the block's end (GLM). Anything else (``I
#: will emit a <tool_call> block``) is reasoning's text: vLLM ends reasoning there, SGLang does not
#: where an end marker follows; builtin reads the call's start.
TOOL_CALL_OPENS = r"\s*(?:[{\[]|<function=)|\n?[\w.\-]+\s*(?:<arg_key>|</tool_call>)"
_TOOL_CALL_FOLLOWS = ((_glm45.START, TOOL_CALL_OPENS),)
#: Qwen3-Coder's call written without its ``<tool_call>`` block (`call_starts`: a ``</think>`` after
#: it is a value's text, not a stray end marker)
BARE_FUNCTION = _qwen3_coder.FN

QWEN3 = think_tags(
    "qwen3",
    "`<think>…</think>` opened by the output (or by the prompt); `<tool_call>` ends reasoning implicitly",
    drop_later_ends=True,
    closers=(_glm45.START,),  # a tool call written straight from reasoning (vLLM and SGLang agree)
    closer_follows=_TOOL_CALL_FOLLOWS,
    call_starts=(BARE_FUNCTION,),
)
DEEPSEEK_R1 = think_tags(
    "deepseek_r1",
    "output starts inside reasoning (the template opened it); `</think>` ends it",
    starts_in_prompt=True,
)
QWEN3_THINKING = think_tags(
    "qwen3_thinking",
    "Qwen3 thinking-2507: the template opens `<think>`; `</think>` or `<tool_call>` ends it",
    drop_later_ends=True,
    closers=(_glm45.START,),
    closer_follows=_TOOL_CALL_FOLLOWS,
    starts_in_prompt=True,
    needs_started=True,
    call_starts=(BARE_FUNCTION,),
)


# --------------------------------------------------------------------------
# More think-tag families: the same shape with their own markers, start state
# and (for models that may open a tool section straight from reasoning) the
# tool-section markers that end reasoning implicitly and stay in the content.
# Tool markers come from the tool formats, so each is written down once.


TOOL_CALL = _glm45.START  # ``<tool_call>``: Qwen/GLM/Nemotron-style tool sections
DSML_TOOL_CALLS = _deepseek_v4.TAGS.calls_begin  # ``<｜DSML｜tool_calls>``: DeepSeek-V4's DSML tool block
DSML_CALLS = _deepseek_v41.TAGS.calls_begin  # ``<｜DSML｜ calls>``: DeepSeek-V4.1's spelling

KIMI_START, KIMI_END = "◁think▷", "◁/think▷"
KIMI = ReasoningFormat(
    family="kimi",
    summary="`◁think▷…◁/think▷` (Kimi thinking / Kimi-VL), opened by the output",
    start=KIMI_START,
    end=KIMI_END,
)
KIMI_K2 = think_tags(
    "kimi_k2",
    "Kimi K2 thinking / K2.5: thinking by default (output may start inside `<think>`); a tool section ends it",
    drop_later_ends=True,
    starts_in_prompt=True,
    closers=(_kimi_k2.SECTION_BEGIN,),
    extra_markers=(KIMI_START, KIMI_END),  # Kimi's older tags: never content either
    notes="thinking=False (instruct mode): pass reasoning_started=False or the prompt.",
)
K2_HORIZON = ReasoningFormat(
    family="k2_horizon",
    summary="`<ifm|think…>…</ifm|think…>` (one pair per reasoning effort), opened by the template",
    start="<ifm|think>",
    end="</ifm|think>",
    alt_starts=("<ifm|think_fast>", "<ifm|think_faster>"),
    alt_ends=("</ifm|think_fast>", "</ifm|think_faster>"),
    starts_in_prompt=True,
    closers=("<ifm|tool_call",),
    notes="K2 Horizon's template prefills the start token matching reasoning_effort; any of the three pairs is read.",
)
GLM45 = think_tags(
    "glm45",
    "`<think>…</think>` opened by the output; `<tool_call>` ends reasoning implicitly",
    drop_later_ends=True,
    closers=(TOOL_CALL,),
    closer_follows=_TOOL_CALL_FOLLOWS,
)
SEED_OSS = ReasoningFormat(
    family="seed_oss",
    summary="Seed-OSS: output typically starts inside reasoning; `</seed:think>` or `<seed:tool_call>` ends it",
    start="<seed:think>",
    end="</seed:think>",
    starts_in_prompt=True,
    closers=(_seed_oss.START,),
)
MINIMAX_M2 = think_tags(
    "minimax_m2",
    "the template opens `<think>`; `</think>` (or a `<minimax:tool_call>` section) ends it",
    drop_later_ends=True,
    starts_in_prompt=True,
    needs_started=True,
    closers=(_minimax_m2.START,),
)
MINIMAX_M3 = ReasoningFormat(
    family="minimax_m3",
    summary="`<mm:think>…</mm:think>`; a non-thinking reply may open with a stray `</mm:think>` (dropped)",
    start="<mm:think>",
    end="</mm:think>",
    drop_stray_end=True,
    notes="thinking_mode=enabled prefills <mm:think> (pass reasoning_started=True or the prompt).",
)
NEMOTRON_V3 = think_tags(
    "nemotron_v3",
    "Nemotron 3: the template opens `<think>`; `</think>` or `<tool_call>` ends it",
    drop_later_ends=True,
    starts_in_prompt=True,
    closers=(TOOL_CALL,),
    closer_follows=_TOOL_CALL_FOLLOWS,
    call_starts=(BARE_FUNCTION,),
)
GRANITE_THINKING = think_tags(
    "granite_thinking",
    "Granite 4.2 thinking: the template opens `<think>`; `</think>` or `<tool_call>` ends it",
    drop_later_ends=True,
    starts_in_prompt=True,
    closers=(TOOL_CALL,),
    closer_follows=_TOOL_CALL_FOLLOWS,
    call_starts=(BARE_FUNCTION,),
)
STEP3P5 = think_tags(
    "step3p5",
    "Step 3.5: output starts inside reasoning; `</think>` or `<tool_call>` ends it",
    drop_later_ends=True,
    starts_in_prompt=True,
    closers=(TOOL_CALL,),
    closer_follows=_TOOL_CALL_FOLLOWS,
    call_starts=(BARE_FUNCTION,),
)
DEEPSEEK_V3 = think_tags(
    "deepseek_v3",
    "DeepSeek-V3.1+: `thinking=True` ends the prompt with `<think>`; off by default",
    notes="chat_template_kwargs thinking toggles the start state: pass reasoning_started or the prompt.",
)
HOLO2 = think_tags(
    "holo2",
    "Holo2 (DeepSeek-V3 template, thinking on by default): output starts inside `<think>`",
    starts_in_prompt=True,
)
DEEPSEEK_V4 = think_tags(
    "deepseek_v4",
    "DeepSeek-V4: thinking on by default (template opens `<think>`); a DSML tool block ends it",
    drop_later_ends=True,
    starts_in_prompt=True,
    closers=(DSML_TOOL_CALLS,),
    closer_follows=((DSML_TOOL_CALLS, r"\s*" + re.escape(_deepseek_v4.TAGS.invoke_open)),),
)
DEEPSEEK_V41 = think_tags(
    "deepseek_v41",
    "DeepSeek-V4.1: as V4, with the `<｜DSML｜ calls>` tool block",
    drop_later_ends=True,
    starts_in_prompt=True,
    closers=(DSML_CALLS,),
    closer_follows=((DSML_CALLS, r"\s*" + re.escape(_deepseek_v41.TAGS.invoke_open)),),
)
OLMO3 = think_tags(
    "olmo3",
    "Olmo 3 Think: the template opens `<think>`; `</think>` ends it",
    starts_in_prompt=True,
)
MIMO = think_tags(
    "mimo",
    "MiMo: `<think>…</think>` opened by the output; `<tool_call>` ends reasoning",
    drop_later_ends=True,
    closers=(TOOL_CALL,),
    closer_follows=_TOOL_CALL_FOLLOWS,
    # (its aliases' calls: Qwen3-Coder's bare function (nanbeige), dots', InternLM's (interns1))
    call_starts=(BARE_FUNCTION, _dots.START, _internlm.ACTION_START),
)
POOLSIDE_V1 = think_tags(
    "poolside_v1",
    "Poolside v1 (Laguna): `<think>…</think>` opened by the output, thinking opt-in",
)
MINICPMV = think_tags(
    "minicpmv",
    "MiniCPM-V: the template opens `<think>` unless thinking is off; `<tool_call>` ends it",
    starts_in_prompt=True,
    closers=(TOOL_CALL,),
    closer_follows=_TOOL_CALL_FOLLOWS,
)
PLAMO3 = ReasoningFormat(
    family="plamo3",
    summary="PLaMo 3: the template opens `<|plamo:begin_think:plamo|>`; its end token closes it",
    start="<|plamo:begin_think:plamo|>",
    end="<|plamo:end_think:plamo|>",
    starts_in_prompt=True,
)
GEMMA4 = ReasoningFormat(
    family="gemma4",
    drop_later_ends=True,  # vLLM drops a stray end marker after the one that closed reasoning
    summary="Gemma 4: a `<|channel>thought` channel closed by `<channel|>`, opened by the output",
    start="<|channel>thought\n",
    end="<channel|>",
    # a channel without the label line (vLLM's reading; SGLang keeps the marker in the reasoning)
    alt_starts=("<|channel>",),
    notes="The channel's label line ('thought' and its newline) is part of the start marker, not reasoning.",
    call_starts=(_gemma4.START,),  # (a ``<channel|>`` in a call's string is its text)
)
APERTUS = ReasoningFormat(
    family="apertus",
    summary="Apertus: `<|inner_prefix|>…<|inner_suffix|>` opened by the output",
    start="<|inner_prefix|>",
    end="<|inner_suffix|>",
)
IQUEST_Q1 = think_tags(
    "iquest_q1",
    "IQuest Q1: thinking on by default, output starts inside `<think>`",
    starts_in_prompt=True,
)
STEP3 = think_tags(
    "step3",
    "Step3: output starts inside reasoning; `</think>` ends it",
    starts_in_prompt=True,
)
HY_V3 = think_tags(
    "hy_v3",
    "Hunyuan HY-V3: `<think>…</think>` opened by the output; thinking off unless reasoning_effort asks",
    notes="Checkpoints may suffix the tokens (`<think:SUFFIX>`): pass start=/end= to the parser.",
)
HY_V4 = think_tags(
    "hy_v4",
    "Hunyuan HY-V4: the template opens `<think>` (thinking on by default); `</think>` ends it",
    starts_in_prompt=True,
    notes="Checkpoints may suffix the tokens (`<think:SUFFIX>`): pass start=/end= to the parser.",
)
