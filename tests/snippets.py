"""Pasting a printed fix where it goes: Python into the parser, shell into ``bash -n``, a Dockerfile
line into hadolint (after a FROM), YAML into the YAML parser. Used by the tests of explain and of the
reports: every fix the doctor prints must survive this as printed."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import yaml

HADOLINT = Path(sys.executable).parent / "hadolint"
BASE_IMAGE = "FROM python:3.11-slim\n"
TEMPLATE_PLACEHOLDER = re.compile(r"<([a-z_]+)>")
UNFILLED = re.compile(r"\{([a-z_]+)\}")


def pasting_problem(kind: str, code: str) -> str | None:
    """What goes wrong when ``code`` of this change kind is pasted where it belongs; None when nothing."""
    if kind == "python":
        try:
            ast.parse(code)
        except SyntaxError as exc:
            return f"Python: {exc.msg} at line {exc.lineno}"
        return None
    if kind in ("shell", "env"):
        checked = subprocess.run(["bash", "-n"], input=code + "\n", capture_output=True, text=True, timeout=30)
        return f"bash -n: {checked.stderr.strip()}" if checked.returncode else None
    if kind == "dockerfile":
        linted = subprocess.run([str(HADOLINT), "--no-color", "--failure-threshold", "error", "-"],
                                input=BASE_IMAGE + code + "\n", capture_output=True, text=True, timeout=60)
        return f"hadolint: {linted.stdout.strip()}" if linted.returncode else None
    if kind in ("kubernetes", "yaml"):
        try:
            yaml.safe_load(code)
        except yaml.YAMLError as exc:
            return f"YAML: {exc}"
        return None
    return None  # text: words for a person, not pasted anywhere


def python_code_outside_strings_and_comments(code: str) -> str:
    """The tokens of ``code`` that Python runs as names and operators: a placeholder among them cannot run."""
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    return " ".join(token.string for token in tokens if token.type not in (tokenize.COMMENT, tokenize.STRING))
