"""Edits of a Dockerfile's ``ENV`` in its final stage (the one that runs): a variable's value rewritten in
place, or an ``ENV`` line added, the rest of the file as it was."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .text import TextEdit
from .yaml_edit import EditRefused, Source, insert_lines

DIRECTIVE = re.compile(r"#\s*([A-Za-z][\w-]*)\s*=\s*(.*?)\s*$")
HEREDOC = re.compile(r"(?:^|(?<=\s))<<(?!<)(-?)\s*([\"']?)([A-Za-z_][\w.-]*)\2")  # a word of its own: not <<< nor $((1<<N))
PLAIN = re.compile(r"[A-Za-z0-9_.,:/@%+=-]+")


@dataclass(frozen=True)
class Instruction:
    """One instruction, its continuation lines joined: ``arguments`` is the text after the keyword with each
    line's escape and newline removed, ``offsets`` the file offset of each of its characters."""

    keyword: str
    line: int
    end: int
    arguments: str
    offsets: tuple[int, ...]


@dataclass(frozen=True)
class Assignment:
    """``name`` set by an ``ENV``: its value as written, from ``start`` to ``end`` of the file."""

    name: str
    start: int
    end: int
    raw: str
    line: int


def instructions(text: str, source: Source) -> list[Instruction]:
    """The Dockerfile's instructions in order (comments, blank lines and heredoc bodies left out)."""
    rows = text.splitlines(keepends=True)
    starts = [0]
    for row in rows:
        starts.append(starts[-1] + len(row))
    index = 0
    while index < len(rows) and (match := DIRECTIVE.match(rows[index].rstrip("\r\n"))):
        if match.group(1).lower() == "escape" and match.group(2) != "\\":
            raise EditRefused(f"{source}: its escape directive is {match.group(2)!r} (line {index + 1}); "
                              "expected the default backslash")
        index += 1
    found: list[Instruction] = []
    while index < len(rows):
        content = rows[index].rstrip("\r\n")
        if not content.strip() or content.lstrip().startswith("#"):
            index += 1
            continue
        first = index
        keyword = re.match(r"\s*(\S+)", content)
        assert keyword is not None
        chars: list[str] = []
        offsets: list[int] = []
        column = keyword.end()
        while True:
            body = rows[index].rstrip("\r\n")[column:]
            continued = body.rstrip().endswith("\\")
            body = body.rstrip()[:-1] if continued else body
            chars.append(body)
            offsets.extend(range(starts[index] + column, starts[index] + column + len(body)))
            index += 1
            column = 0
            while continued and index < len(rows) and (not rows[index].strip() or rows[index].lstrip().startswith("#")):
                index += 1
            if not continued or index >= len(rows):
                break
        arguments = "".join(chars)
        found.append(Instruction(keyword.group(1).upper(), first + 1, starts[index], arguments, tuple(offsets)))
        if found[-1].keyword in ("RUN", "COPY", "ADD"):
            for heredoc in HEREDOC.finditer(arguments):
                ends = [at for at in range(index, len(rows))
                        if (rows[at].rstrip("\r\n").lstrip("\t") if heredoc.group(1) else rows[at].rstrip("\r\n")) == heredoc.group(3)]
                if ends:  # a body with no end is no heredoc: its lines stay instructions
                    index = ends[0] + 1
    return found


def _words(arguments: str) -> list[tuple[int, int]]:
    """The spans of the whitespace-separated words of ``arguments``, quotes and escapes kept inside a word."""
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(arguments):
        if arguments[index].isspace():
            index += 1
            continue
        start = index
        quote = ""
        while index < len(arguments) and (quote or not arguments[index].isspace()):
            char = arguments[index]
            if char == "\\" and quote != "'":
                index += 1
            elif char == quote:
                quote = ""
            elif char in "'\"" and not quote:
                quote = char
            index += 1
        spans.append((start, min(index, len(arguments))))
    return spans


def assignments(instruction: Instruction, source: Source) -> list[Assignment]:
    """What an ``ENV`` sets (``ENV A=1 B="2"`` or the older ``ENV NAME value``), each value's span in the file."""
    text = instruction.arguments
    words = _words(text)
    if not words:
        return []
    spans: list[tuple[str, int, int]] = []
    if "=" not in text[words[0][0] : words[0][1]]:
        rest = len(text.rstrip())
        value_start = next((i for i in range(words[0][1], rest) if not text[i].isspace()), rest)
        spans.append((text[words[0][0] : words[0][1]], value_start, rest))
    else:
        for start, end in words:
            equals = text.find("=", start, end)
            if equals < 0:
                raise EditRefused(f"{source}: ENV at line {instruction.line} mixes NAME=value with a bare word "
                                  f"({text[start:end]}); expected NAME=value pairs")
            spans.append((text[start:equals], equals + 1, end))
    found = []
    for name, start, end in spans:
        begin = instruction.offsets[start] if start < end else instruction.offsets[start - 1] + 1
        finish = instruction.offsets[end - 1] + 1 if start < end else begin
        if finish - begin != end - start:
            raise EditRefused(f"{source}: the value of {name} (ENV at line {instruction.line}) runs over several "
                              "lines; expected it on one line")
        found.append(Assignment(name, begin, finish, text[start:end], instruction.line))
    return found


def unquoted(raw: str) -> tuple[str, bool]:
    """The value Docker gives a written ``raw`` (quotes removed, escapes applied) and whether it substitutes a
    variable (``$NAME``, ``${NAME}``) there."""
    out: list[str] = []
    quote = ""
    substitutes = False
    index = 0
    while index < len(raw):
        char = raw[index]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                out.append(char)
        elif char == "\\" and index + 1 < len(raw):
            escaped = raw[index + 1]
            if quote == '"' and escaped not in '"\\$':
                out.append(char)
            out.append(escaped)
            index += 1
        elif char == quote:
            quote = ""
        elif char in "'\"" and not quote:
            quote = char
        else:
            substitutes = substitutes or char == "$"
            out.append(char)
        index += 1
    return "".join(out), substitutes


def written(value: str, like: str = "") -> str:
    """``value`` as an ``ENV`` value, in the quotes of ``like`` (the value it replaces) where it had some."""
    if like[:1] == "'" and "'" not in value:
        return f"'{value}'"
    if like[:1] != '"' and PLAIN.fullmatch(value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def set_env(text: str, name: str, value: str, why: str, source: Source) -> list[TextEdit]:
    """Set the environment variable ``name`` to ``value`` in the Dockerfile's final stage: the value of the
    ``ENV`` there that sets it rewritten, else ``ENV name=value`` added after that stage's last ``ENV`` (or its
    ``FROM``); ``[]`` where it holds ``value`` already."""
    found = instructions(text, source)
    stages = [index for index, instruction in enumerate(found) if instruction.keyword == "FROM"]
    if not stages:
        raise EditRefused(f"{source}: no FROM instruction; expected a Dockerfile")
    final = found[stages[-1]:]
    envs = [instruction for instruction in final if instruction.keyword == "ENV"]
    setting = [assignment for env in envs for assignment in assignments(env, source) if assignment.name == name]
    if setting:
        last = setting[-1]
        current, substitutes = unquoted(last.raw)
        if substitutes:
            raise EditRefused(f"{source}: {name} is set from a variable ({last.raw}, ENV at line {last.line}); "
                              "expected a literal value to rewrite")
        if current == value:
            return []
        return [TextEdit(last.start, last.end, written(value, last.raw), why)]
    after = envs[-1] if envs else final[0]
    return [insert_lines(text, after.end, [f"ENV {name}={written(value)}"], why)]
