"""Values placed into code text, quoted for the code's language: a fix's shell or Dockerfile line,
its Python, its YAML. Whatever the inspected container named a folder, pasting the fix passes that
name as one word or one string, and runs nothing else.

Renderers never quote: they escape for their own format (``doctor/base/escape.py``).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Sequence
from typing import Any

LINE_BREAK = re.compile(r"[\r\n]")
YAML_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./-]*")
YAML_NOT_TEXT = re.compile(r"(?i)true|false|yes|no|on|off|y|n|null|[-+]?\.?\d[\d._:eE+-]*|\.inf|\.nan")  # YAML reads these as no string


class Code(str):
    """Text that already is code in the fix's language, made by the doctor with its own values quoted
    (a list of Config calls, a pip argument list): filled into a fix as it is."""


def python_literal(value: Any) -> str:
    """A Python literal that evaluates to ``value`` (a string, number, bool, None, or a list of them)."""
    return repr(value)


def python_call(method: str, args: Sequence[Any]) -> str:
    """``method('arg', 2)``: a call with literal arguments."""
    return f"{method}({', '.join(python_literal(arg) for arg in args)})"


def shell_word(value: Any) -> str:
    """One POSIX shell word that is ``value``; a list is one word per item."""
    if isinstance(value, (list, tuple)):
        return " ".join(shell_word(item) for item in value)
    return shlex.quote(str(value))


def dockerfile_word(value: Any) -> str:
    """One shell word on a Dockerfile line (a RUN line's shell): a line break would end the
    instruction, so a value with one is written by printf's ``%b`` (``\\n``) inside the word;
    command substitution drops line breaks at its very end."""
    if isinstance(value, (list, tuple)):
        return " ".join(dockerfile_word(item) for item in value)
    text = str(value)
    if not LINE_BREAK.search(text):
        return shell_word(text)
    escaped = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return f'"$(printf %b {shell_word(escaped)})"'


def yaml_scalar(value: Any) -> str:
    """A YAML scalar (block or flow context) that reads back as ``value``'s text: plain when that is
    safe, else double-quoted with JSON's escapes (which YAML reads)."""
    text = str(value)
    if isinstance(value, (int, float)) or (YAML_PLAIN.fullmatch(text) and not YAML_NOT_TEXT.fullmatch(text)):
        return text
    return json.dumps(text, ensure_ascii=False)


QUOTE_FOR: dict[str, Callable[[Any], str]] = {"python": python_literal, "shell": shell_word, "env": shell_word, "dockerfile": dockerfile_word,
             "kubernetes": yaml_scalar, "yaml": yaml_scalar, "text": str}


def quoted(value: Any, kind: str) -> str:
    """``value`` as it is filled into a fix of ``kind`` (a rules.yaml change kind)."""
    return value if isinstance(value, Code) else QUOTE_FOR[kind](value)
