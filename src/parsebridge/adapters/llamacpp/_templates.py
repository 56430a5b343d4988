"""Which chat template a ``llamacpp:NAME`` parser renders and parses with, and where its harness is.

A NAME is one of two things:

* the name of a template llama.cpp ships (``models/templates/NAME.jinja`` of the built snapshot,
  matched after normalising case and ``-``/``_``), or a family whose row in the family table names
  one (``llamacpp:hermes`` → ``NousResearch-Hermes-3-Llama-3.1-8B-tool_use``: the registry does that);
* a path (it contains ``/`` or ends in ``.jinja``): a template file, or a tokenizer folder whose
  ``tokenizer_config.json`` has the template as ``chat_template``, or else has a
  ``chat_template.jinja`` or ``chat_template.json`` (the order llama.cpp's GGUF converter reads them in)
  (its ``bos_token`` and ``eos_token`` are passed on, as llama-server passes the model's; a named
  ``tool_use`` template renders the requests with tools, as llama-server's ``tool_use`` variant).

The harness used is the newest one built in this environment (`installed`), or the one named by
``$PARSEBRIDGE_LLAMACPP`` (a llama-cpp-python version, e.g. ``0.3.30``).
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._frameworks.install import _version_key
from ..._frameworks.llamacpp_build import BINARY, installed
from ...protocol.errors import InvalidSpecError, json_problem

#: The environment variable that picks one of several built snapshots.
SNAPSHOT_ENV = "PARSEBRIDGE_LLAMACPP"


@dataclass(frozen=True)
class Snapshot:
    """One built harness: the llama-cpp-python version it came from, its binary and templates."""

    version: str
    root: Path

    @property
    def binary(self) -> Path:
        return self.root / "bin" / BINARY

    @property
    def templates(self) -> Path:
        return self.root / "templates"

    def manifest(self) -> dict[str, Any]:
        return json.loads((self.root / "manifest.json").read_text())  # type: ignore[no-any-return]

    def template_names(self) -> list[str]:
        return sorted(p.stem for p in self.templates.glob("*.jinja"))


class TemplateFileError(InvalidSpecError):
    """A ``llamacpp:PATH`` whose chat template cannot be had: not UTF-8 text, empty, or a
    tokenizer_config.json that is not a JSON object. The caller's input, refused before the
    harness sees it (an empty template made it abort: llama.cpp then asks the model for its own)."""


class TemplateNotFoundError(TemplateFileError, FileNotFoundError):
    """A ``llamacpp:PATH`` that names no file, or a folder with no chat template in it."""


@dataclass(frozen=True)
class Template:
    """A chat template's text and the bos/eos strings rendered with it."""

    name: str
    source: str
    bos: str = ""
    eos: str = ""
    #: A tokenizer folder's ``tool_use`` template, where it names one: llama.cpp renders a request
    #: with tools through it (`for_tools`), as a GGUF converted from that folder carries it.
    tool_use: str = ""

    def for_tools(self, has_tools: bool) -> str:
        """The source llama.cpp renders a request with: the ``tool_use`` template when the request
        has tools and there is one (``common_chat_templates_apply``), else the default."""
        return self.tool_use if has_tools and self.tool_use else self.source


def snapshot() -> Snapshot | None:
    """The harness to run (see module doc), or None when none is built here."""
    found = installed()
    if not found:
        return None
    wanted = os.environ.get(SNAPSHOT_ENV)
    if wanted:
        return Snapshot(wanted, found[wanted]) if wanted in found else None
    version = max(found, key=_version_key)
    return Snapshot(version, found[version])


def unavailable_reason() -> str | None:
    found = installed()
    wanted = os.environ.get(SNAPSHOT_ENV)
    if wanted and wanted not in found:
        return f"${SNAPSHOT_ENV}={wanted} but the harnesses built here are: {', '.join(found) or 'none'}"
    snap = snapshot()
    if snap is None:
        return "no llama.cpp harness is built in this environment"
    if not os.access(snap.binary, os.X_OK):
        return f"{snap.binary} is missing or not executable (rebuild it)"
    return None


def is_path(name: str) -> bool:
    """Whether a NAME is a template file or tokenizer folder rather than a shipped template's name."""
    return "/" in name or os.sep in name or name.endswith(".jinja") or name.startswith("~")


def _token_text(value: Any) -> str:
    """A tokenizer_config token: a string, or an AddedToken dict with its ``content``."""
    if isinstance(value, dict):
        return str(value.get("content") or "")
    return value if isinstance(value, str) else ""


def _read(path: Path) -> str:
    """A template or config file's text; `TemplateFileError` saying what is wrong with it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TemplateNotFoundError(f"no chat template file at {path}") from None
    except UnicodeDecodeError as exc:
        raise TemplateFileError(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}): a chat template is Jinja text"
        ) from None
    except OSError as exc:
        raise TemplateFileError(f"{path}: {exc.strerror or exc}") from None
    return text


def _checked(source: str, where: Path) -> str:
    """`source`, refused when empty: llama.cpp renders with the model's own template when given
    none (``common_chat_templates_init``), and the harness has no model to ask."""
    if not source.strip():
        raise TemplateFileError(
            f"the chat template of {where} is empty (llama-server would use the model's own "
            "template; there is no model here): give a template with some Jinja in it"
        )
    return source


def _config(folder: Path, file: str = "tokenizer_config.json") -> dict[str, Any]:
    """A folder's JSON file (its tokenizer_config.json) as a dict ({} when there is none)."""
    path = folder / file
    if not path.is_file():
        return {}
    try:
        config = json.loads(_read(path))
    except ValueError as exc:
        raise TemplateFileError(f"{path} is not valid JSON: {json_problem(exc)}") from None
    if not isinstance(config, dict):
        raise TemplateFileError(f"{path} is not a JSON object (it is a {type(config).__name__})")
    return config


def _named(templates: list[Any]) -> dict[str, str]:
    """A ``chat_template`` list (``[{"name": "default", "template": ...}, ...]``) by name."""
    return {
        str(t.get("name")): t["template"]
        for t in templates
        if isinstance(t, dict) and isinstance(t.get("template"), str)
    }


def _from_folder(folder: Path) -> Template:
    """A tokenizer folder's template, read as llama.cpp's GGUF converter reads one (its default
    template, and the named ``tool_use`` one that llama-server renders tool requests with).

    The converter takes ``tokenizer_config.json``'s ``chat_template`` where it is one (a text or
    a named list), and the template files only where it is not: so does this, though
    transformers prefers the files."""
    config = _config(folder)
    bos, eos = _token_text(config.get("bos_token")), _token_text(config.get("eos_token"))
    given = config.get("chat_template")
    if isinstance(given, str):
        named = {"default": given}
    elif isinstance(given, list):
        named = _named(given)
    else:
        named = _template_files(folder)
    # Without a default, llama.cpp renders everything with the tool_use template.
    source = named.get("default") or named.get("tool_use", named.get("default"))
    if source is None:
        raise TemplateNotFoundError(
            f"{folder} has no chat_template in tokenizer_config.json, no chat_template.jinja"
            " and no chat_template.json"
        )
    tool_use = named.get("tool_use", "")
    return Template(str(folder), _checked(source, folder), bos, eos, tool_use and _checked(tool_use, folder))


def _template_files(folder: Path) -> dict[str, str]:
    """The folder's template files by name: ``chat_template.jinja`` (with the named ones of
    ``additional_chat_templates/``), else ``chat_template.json``'s ``chat_template``."""
    if (folder / "chat_template.jinja").is_file():
        named = {"default": _read(folder / "chat_template.jinja")}
        extra = folder / "additional_chat_templates" / "tool_use.jinja"
        if extra.is_file():
            named["tool_use"] = _read(extra)
        return named
    given = _config(folder, "chat_template.json").get("chat_template")
    if isinstance(given, str):
        return {"default": given}
    return _named(given) if isinstance(given, list) else {}


def load(name: str, snap_root: str | None = None) -> Template:
    """The template for a NAME (a shipped template's name, or a path: see module doc).

    A path is read again for every parser built: it is the user's file, which they may edit
    between two parsers of one process (a notebook); a shipped template never changes."""
    if is_path(name):
        path = Path(name).expanduser()
        if path.is_dir():
            return _from_folder(path)
        return Template(str(path), _checked(_read(path), path))
    if snap_root is None:
        raise FileNotFoundError(f"no llama.cpp harness built here to find template {name!r} in")
    return _shipped(name, snap_root)


@functools.lru_cache(maxsize=256)
def _shipped(name: str, snap_root: str) -> Template:
    """A template the snapshot ships (read once per process)."""
    path = Path(snap_root) / "templates" / f"{name}.jinja"
    return Template(name, path.read_text(encoding="utf-8"))
