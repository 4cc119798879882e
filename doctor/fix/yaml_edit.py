"""Edits of a YAML file's scalars in place (a key's value set, a missing key added), found through PyYAML's
composed nodes, whose marks are character offsets: comments, quoting and layout outside the edit stay."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .text import EditRefused, TextEdit

Scalar = str | int | float | bool | None
Source = str | os.PathLike[str]
NULL_TAG = "tag:yaml.org,2002:null"


def plain_scalar(value: Scalar) -> str:
    """``value`` as YAML writes it after ``key: ``: plain where reading it back gives the same value (``2``,
    ``true``, ``avx512``), else single-quoted, else double-quoted."""
    if isinstance(value, str):
        if value and value == value.strip() and _reads_back(value, value):
            return value
        return quoted_scalar(value, "'")
    written = yaml.safe_dump(value, width=2**31)
    written = written[: -len("...\n")] if written.endswith("\n...\n") else written
    written = written.rstrip("\n")
    if not _reads_back(written, value):
        raise ValueError(f"{value!r} cannot be written as a YAML scalar")
    return written


def quoted_scalar(value: str, style: str) -> str:
    """``value`` in YAML's ``style`` of quotes (``'`` or ``"``), double where single quotes cannot hold it."""
    if style == "'":
        single = "'" + value.replace("'", "''") + "'"
        if _reads_back(single, value):
            return single
    double = json.dumps(value, ensure_ascii=False)
    return double if _reads_back(double, value) else json.dumps(value)


def _reads_back(written: str, value: Scalar) -> bool:
    try:
        loaded = yaml.safe_load(f"k: {written}\n")
    except yaml.YAMLError:
        return False
    return isinstance(loaded, dict) and list(loaded) == ["k"] and type(loaded["k"]) is type(value) and loaded["k"] == value


def constructed(node: ScalarNode) -> object:
    """The value a YAML loader gives ``node`` (``8``, ``False``, ``'8'``)."""
    return yaml.SafeLoader("").construct_object(node, deep=True)


def compose_documents(text: str, source: Source) -> list[Node | None]:
    """Each YAML document of ``text`` as composed nodes (``None`` for an empty one)."""
    try:
        return list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or "unreadable"
        raise EditRefused(f"{source}: not valid YAML ({problem}{where}); expected a file YAML can read") from None


def newline_of(text: str) -> str:
    """The newline the text's lines end in (CRLF where its first line ends so, else LF)."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def walk(node: Node | None) -> Iterator[Node]:
    """Every node under ``node``, each once (an alias's node is not visited again)."""
    seen: set[int] = set()
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, MappingNode):
            stack.extend(part for pair in reversed(current.value) for part in reversed(pair))
        elif isinstance(current, SequenceNode):
            stack.extend(reversed(current.value))


def shared_nodes(root: Node | None) -> set[int]:
    """The ids of nodes reached from more than one place (an anchor that an alias repeats): editing one edits all."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [root] if root is not None else []
    while stack:
        current = stack.pop()
        if id(current) in seen:
            shared.add(id(current))
            continue
        seen.add(id(current))
        if isinstance(current, MappingNode):
            stack.extend(part for pair in current.value for part in pair)
        elif isinstance(current, SequenceNode):
            stack.extend(current.value)
    return shared


def block_mapping(node: Node, what: str, text: str, source: Source, shared: set[int]) -> MappingNode:
    """``node`` where it is a block mapping that can be edited in place, else refused."""
    if not isinstance(node, MappingNode):
        raise EditRefused(f"{source}: {what} is a {kind_of(node)} at line {node.start_mark.line + 1}; expected a mapping")
    if node.flow_style:
        flow = text[node.start_mark.index : node.end_mark.index].splitlines()[0]
        raise EditRefused(f"{source}: {what} is a flow mapping ({flow}) at line {node.start_mark.line + 1}; "
                          "expected a block mapping (one key a line) to edit in place")
    if id(node) in shared:
        raise EditRefused(f"{source}: {what} at line {node.start_mark.line + 1} is anchored and repeated by an alias; "
                          "expected a mapping of its own")
    return node


def kind_of(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "mapping"
    if isinstance(node, SequenceNode):
        return "list"
    return "scalar"


def mapping_entry(mapping: MappingNode, key: str, source: Source) -> tuple[ScalarNode, Node] | None:
    """The key node and value node of ``key`` in ``mapping``, ``None`` where it has none; a key twice is refused."""
    found = [(k, v) for k, v in mapping.value if isinstance(k, ScalarNode) and k.value == key]
    if len(found) > 1:
        lines = ", ".join(str(k.start_mark.line + 1) for k, _ in found)
        raise EditRefused(f"{source}: {key} is set {len(found)} times in one mapping (lines {lines}); expected it once")
    return found[0] if found else None


def editable_scalar(node: Node, what: str, text: str, source: Source, shared: set[int]) -> ScalarNode:
    """``node`` where it is a scalar whose span can be replaced, else refused."""
    line = node.start_mark.line + 1
    if not isinstance(node, ScalarNode):
        raise EditRefused(f"{source}: {what} is a {kind_of(node)} at line {line}; expected a scalar value")
    if id(node) in shared:
        raise EditRefused(f"{source}: {what} at line {line} is an anchor or alias shared with another key; "
                          "expected a value of its own")
    start = text[node.start_mark.index : node.start_mark.index + 1]
    if start in ("&", "!", "*"):
        raise EditRefused(f"{source}: {what} at line {line} carries an anchor or tag ({start}); expected a bare value")
    if node.style in ("|", ">"):
        raise EditRefused(f"{source}: {what} at line {line} is a block scalar ({node.style}); expected a one-line value")
    return node


def is_empty(node: Node) -> bool:
    """Whether ``node`` is a key's missing value (``key:`` and nothing after it)."""
    return isinstance(node, ScalarNode) and node.tag == NULL_TAG and node.value == "" and node.style is None


def content_end(node: Node) -> int:
    """The offset just past ``node``'s last character of content (a block mapping's own end mark lies past the
    comments and blank lines that follow it)."""
    if isinstance(node, (MappingNode, SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        return content_end(last[1] if isinstance(node, MappingNode) else last)
    return node.end_mark.index


def line_after(text: str, offset: int) -> int:
    """The offset where the line holding ``offset`` ends and the next begins (the text's length past its end)."""
    if offset > 0 and text[offset - 1] == "\n":
        return offset
    found = text.find("\n", offset)
    return len(text) if found < 0 else found + 1


def insert_lines(text: str, at: int, lines: list[str], why: str) -> TextEdit:
    """Insert ``lines`` (indented already) as whole lines at line start ``at``, in the text's newline style."""
    newline = newline_of(text)
    if at == len(text) and text and not text.endswith("\n"):
        return TextEdit(at, at, newline + newline.join(lines), why)
    return TextEdit(at, at, newline.join(lines) + newline, why)


def indent_step(root: Node | None) -> int:
    """How far the document indents a mapping under its key (the first nested one found; 2 where none is)."""
    for node in walk(root):
        if isinstance(node, MappingNode) and not node.flow_style:
            for key, value in node.value:
                if isinstance(value, MappingNode) and not value.flow_style and value.value:
                    step = value.value[0][0].start_mark.column - key.start_mark.column
                    if step > 0:
                        return step
    return 2


def nested_lines(path: tuple[str, ...], column: int, step: int, written: str) -> list[str]:
    """``a:`` / ``  b: value`` lines that create ``path`` with its first key at ``column``."""
    lines = [" " * (column + step * depth) + f"{key}:" for depth, key in enumerate(path[:-1])]
    return [*lines, " " * (column + step * (len(path) - 1)) + f"{path[-1]}: {written}"]


Render = Callable[[ScalarNode | None], str]


def set_in_mapping(text: str, mapping: Node, path: tuple[str, ...], render: Render, same: Callable[[ScalarNode], bool],
                   why: str, source: Source, shared: set[int], step: int, where: str = "") -> list[TextEdit]:
    """Set the scalar at ``path`` under ``mapping``: its span replaced by ``render(node)``, or the missing keys
    added as lines after the mapping's last entry; none where ``same(node)``."""
    node = mapping
    for depth, key in enumerate(path):
        what = _named(path[:depth], where)
        current = block_mapping(node, what, text, source, shared)
        entry = mapping_entry(current, key, source)
        if entry is None:
            column = current.value[0][0].start_mark.column
            at = line_after(text, content_end(current))
            return [insert_lines(text, at, nested_lines(path[depth:], column, step, render(None)), why)]
        key_node, value = entry
        if depth < len(path) - 1:
            if is_empty(value):
                at = line_after(text, key_node.end_mark.index)
                column = key_node.start_mark.column + step
                return [insert_lines(text, at, nested_lines(path[depth + 1 :], column, step, render(None)), why)]
            node = value
            continue
        name = _named(path, where)
        if is_empty(value):
            return [TextEdit(value.start_mark.index, value.end_mark.index, " " + render(None), why)]
        scalar = editable_scalar(value, name, text, source, shared)
        if same(scalar):
            return []
        return [TextEdit(scalar.start_mark.index, scalar.end_mark.index, render(scalar), why)]
    raise ValueError("a key path must name at least one key")


def _named(path: tuple[str, ...], where: str) -> str:
    dotted = ".".join(path)
    return f"{dotted} of {where}" if dotted and where else dotted or where or "the document"


def scalar_writer(value: Scalar) -> tuple[Render, Callable[[ScalarNode], bool]]:
    """How ``value`` is written over a scalar (a quoted string keeps its quotes) and when it is already there."""

    def render(node: ScalarNode | None) -> str:
        if node is not None and node.style in ("'", '"') and isinstance(value, str):
            return quoted_scalar(value, node.style)
        return plain_scalar(value)

    def same(node: ScalarNode) -> bool:
        existing = constructed(node)
        return type(existing) is type(value) and existing == value

    return render, same


def set_key(text: str, path: tuple[str, ...], value: Scalar, why: str, source: Source) -> list[TextEdit]:
    """Set the scalar at the mapping key ``path`` (``("Global", "cpu_math_library_num_threads")``) to ``value``:
    its span rewritten, or the key (and any missing mappings above it) added; ``[]`` where it holds ``value``."""
    if not path:
        raise ValueError("a key path must name at least one key")
    documents = compose_documents(text, source)
    if len(documents) > 1:
        holding = [doc for doc in documents if _holds(doc, path)]
        if len(holding) != 1:
            raise EditRefused(f"{source}: {len(documents)} YAML documents and {len(holding)} of them set "
                              f"{'.'.join(path)}; expected one document to edit")
        documents = holding
    root = documents[0] if documents else None
    render, same = scalar_writer(value)
    if root is None or is_empty(root):
        return [insert_lines(text, len(text), nested_lines(path, 0, 2, render(None)), why)]
    return set_in_mapping(text, root, path, render, same, why, source, shared_nodes(root), indent_step(root))


def child(node: Node | None, key: str) -> Node | None:
    """The value of ``key`` where ``node`` is a mapping that has it (its first, where it has it twice)."""
    if not isinstance(node, MappingNode):
        return None
    found = [v for k, v in node.value if isinstance(k, ScalarNode) and k.value == key]
    return found[0] if found else None


def _holds(node: Node | None, path: tuple[str, ...]) -> bool:
    for key in path:
        node = child(node, key)
        if node is None:
            return False
    return True


def has_key(text: str, key: str, source: Source) -> bool:
    """Whether any mapping of any document has ``key``."""
    return any(isinstance(node, MappingNode) and child(node, key) is not None
               for root in compose_documents(text, source) for node in walk(root))


def set_key_everywhere(text: str, key: str, value: Scalar, why: str, source: Source) -> list[TextEdit]:
    """Set every scalar whose mapping key is ``key``, in any mapping of any document (a configuration that repeats
    a global key in each section); ``[]`` where none is found or each holds ``value``. A value anchored once and
    repeated by aliases (``key: &threads -1`` ... ``key: *threads``) is edited once, at its anchor, where every
    place that repeats it is that key."""
    render, same = scalar_writer(value)
    edits: list[TextEdit] = []
    for root in compose_documents(text, source):
        shared = shared_nodes(root)
        anchored: set[int] = set()
        for node in walk(root):
            entry = mapping_entry(node, key, source) if isinstance(node, MappingNode) else None
            if entry is None:
                continue
            block_mapping(node, f"the mapping holding {key}", text, source, shared)
            held = entry[1]
            if isinstance(held, ScalarNode) and id(held) in shared:
                if id(held) not in anchored:
                    anchored.add(id(held))
                    edits.extend(_anchored_edit(text, root, key, held, render, same, why, source))
                continue
            edits.extend(set_in_mapping(text, node, (key,), render, same, why, source, shared, 2))
    return sorted(edits, key=lambda edit: edit.start)


def _anchored_edit(text: str, root: Node | None, key: str, node: ScalarNode, render: Render, same: Callable[[ScalarNode], bool],
                   why: str, source: Source) -> list[TextEdit]:
    """The value of an anchored scalar rewritten after its anchor, where each place it is repeated is ``key``'s."""
    line = node.start_mark.line + 1
    places = [(k, v) for parent in walk(root) for k, v in _links(parent) if v is node]
    if any(not isinstance(k, ScalarNode) or k.value != key for k, _ in places):
        raise EditRefused(f"{source}: {key} at line {line} is anchored and repeated by an alias under another key; "
                          "expected a value of its own, or one repeated only as the same key")
    written = text[node.start_mark.index : node.end_mark.index]
    anchor = re.match(r"&\S+\s+", written)
    if anchor is None or written[anchor.end():anchor.end() + 1] in ("!", "|", ">"):
        raise EditRefused(f"{source}: {key} at line {line} is written `{written}`; expected an anchor and a bare value")
    if same(node):
        return []
    return [TextEdit(node.start_mark.index + anchor.end(), node.end_mark.index, render(node), why)]


def _links(node: Node) -> list[tuple[Node | None, Node]]:
    """What ``node`` holds, each with its key (None for a list's items)."""
    if isinstance(node, MappingNode):
        return [(k, v) for k, v in node.value]
    if isinstance(node, SequenceNode):
        return [(None, item) for item in node.value]
    return []
