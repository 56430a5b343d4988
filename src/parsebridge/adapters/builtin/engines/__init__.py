"""The shared engines of the builtin parsers: one machine per output syntax.

The per-format modules beside this package (``hermes``, ``kimi_k2``, …) only configure
an engine with their format's markers. Here live the machines themselves:

* ``scan`` — the incremental driver every builtin tool stream runs on (buffer, content
  OpenAI delta bookkeeping), with ``call_steps`` (what a format does on a call),
  ``content_policy`` (what outside calls is content), ``markers`` (marker search over the
  buffer) and ``json_text`` (the raw JSON scanner);
* ``call_objects`` / ``call_blocks`` — ``{"name": …, "arguments": …}`` objects, and blocks
  holding one such object;
* ``json_payload`` — formats whose calls are JSON after a marker (Hermes, Granite, xLAM, …),
  with ``keyed_object`` for a call object keyed by its name (Apertus);
* ``sections`` — what the formats with a tool-call section share; ``section_json`` — the
  special-token sections with raw JSON arguments (Kimi K2, PLaMo 3); ``invoke`` — the
  ``<invoke name=…><parameter …>`` formats (DeepSeek V3.2, Step-3);
* ``tagged`` — the XML-ish tagged-parameter formats, values typed by ``schema_values``;
* ``think_tags`` / ``reasoning_sections`` — reasoning with one marker pair, or with
  alternatives, implicit closers and answer wrappers; ``reasoning_start`` decides where
  reasoning starts;
* ``conventions`` — ``conventions="servers" | "lossless"``, the one content policy.
"""
