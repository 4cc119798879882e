"""Edits of a Kubernetes manifest's container (an environment variable's value) in the pod
template of its workload, in place: the other documents, comments and layout as they were."""

from __future__ import annotations

import re
from dataclasses import dataclass

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .text import TextEdit
from .yaml_edit import (
    EditRefused,
    Source,
    block_mapping,
    child,
    compose_documents,
    constructed,
    content_end,
    editable_scalar,
    indent_step,
    insert_lines,
    is_empty,
    line_after,
    mapping_entry,
    quoted_scalar,
    set_in_mapping,
    shared_nodes,
)

POD_SPEC = {
    "Pod": ("spec",),
    "Deployment": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(m?)")


@dataclass(frozen=True)
class Container:
    """One container of a workload's pod template: its mapping, the list holding it and that list's key."""

    workload: str
    name: str
    node: MappingNode
    listed_in: SequenceNode
    list_key: ScalarNode
    step: int
    shared: frozenset[int]


def _scalar(node: Node | None) -> str:
    return node.value if isinstance(node, ScalarNode) else ""


def containers(text: str, source: Source) -> list[Container]:
    """The containers of every workload document in the manifest (``spec.template.spec.containers``, a Pod's
    ``spec.containers``, a CronJob's ``spec.jobTemplate.spec.template.spec.containers``)."""
    found = []
    for root in compose_documents(text, source):
        kind = _scalar(child(root, "kind"))
        if kind not in POD_SPEC:
            continue
        spec: Node | None = root
        for key in POD_SPEC[kind]:
            spec = child(spec, key)
        entry = mapping_entry(spec, "containers", source) if isinstance(spec, MappingNode) else None
        if entry is None or not isinstance(entry[1], SequenceNode):
            continue
        workload = f"{kind}/{_scalar(child(child(root, 'metadata'), 'name')) or '?'}"
        shared = frozenset(shared_nodes(root))
        step = indent_step(root)
        for item in entry[1].value:
            if isinstance(item, MappingNode):
                found.append(Container(workload, _scalar(child(item, "name")), item, entry[1], entry[0], step, shared))
    return found


def pick(text: str, source: Source, container: str | None) -> Container:
    """The container to edit: the one named, or the manifest's only one; refused where that is not one."""
    every = containers(text, source)
    listed = ", ".join(f"{found.workload}: {found.name or '(unnamed)'}" for found in every)
    if container is None:
        if len(every) == 1:
            return every[0]
        if not every:
            raise EditRefused(f"{source}: no workload with containers; expected a Deployment, StatefulSet, "
                              "DaemonSet, Job, CronJob or Pod")
        raise EditRefused(f"{source}: {len(every)} containers ({listed}); expected the one to edit to be named")
    named = [found for found in every if found.name == container]
    if len(named) == 1:
        return named[0]
    if not named:
        raise EditRefused(f"{source}: no container named {container} ({listed or 'no containers'}); "
                          "expected one of those")
    workloads = ", ".join(found.workload for found in named)
    raise EditRefused(f"{source}: {len(named)} containers named {container} ({workloads}); expected one")


def _dash(text: str, item: Node) -> tuple[int, int]:
    """The column of the ``-`` before a list item and the column its content starts at."""
    index = item.start_mark.index - 1
    while index >= 0 and text[index] in " \t\r\n":
        index -= 1
    dash = index - (text.rfind("\n", 0, index) + 1)
    same_line = "\n" not in text[index : item.start_mark.index]
    return dash, item.start_mark.column if same_line else dash + 2


def _env_item(name: str, written: str, dash: int, content: int, flow: bool) -> list[str]:
    gap = " " * (content - dash - 1)
    if flow:
        return [" " * dash + f"-{gap}{{name: {name}, value: {written}}}"]
    return [" " * dash + f"-{gap}name: {name}", " " * content + f"value: {written}"]


def set_container_env(text: str, name: str, value: str, why: str, source: Source,
                      container: str | None = None) -> list[TextEdit]:
    """Set ``env`` variable ``name`` of the container (named, or the only one) to ``value``, written
    double-quoted: its ``value:`` rewritten, an item added to ``env``, or an ``env:`` block added; ``[]`` where
    it holds ``value`` already."""
    found = pick(text, source, container)
    shared = set(found.shared)
    what = f"container {found.name or '(unnamed)'} of {found.workload}"
    mapping = block_mapping(found.node, what, text, source, shared)
    written = quoted_scalar(value, '"')
    list_dash, list_content = _dash(text, found.node)
    indent = list_dash - found.list_key.start_mark.column
    entry = mapping_entry(mapping, "env", source)
    if entry is None or is_empty(entry[1]):
        column = mapping.value[0][0].start_mark.column
        if entry is None:
            head = [" " * column + "env:"]
            at = line_after(text, content_end(mapping))
        else:
            head, at = [], line_after(text, entry[0].end_mark.index)
        dash = column + indent
        lines = _env_item(name, written, dash, dash + list_content - list_dash, False)
        return [insert_lines(text, at, head + lines, why)]
    env = entry[1]
    if not isinstance(env, SequenceNode) or env.flow_style:
        shape = "flow list" if isinstance(env, SequenceNode) else "mapping" if isinstance(env, MappingNode) else "scalar"
        raise EditRefused(f"{source}: env of {what} is a {shape} at line {env.start_mark.line + 1}; "
                          "expected a block list of name/value items")
    items = [item for item in env.value if _scalar(child(item, "name")) == name]
    if len(items) > 1:
        raise EditRefused(f"{source}: {name} is listed {len(items)} times in the env of {what}; expected it once")
    if items:
        item = items[0]
        source_of = child(item, "valueFrom")
        if source_of is not None:
            raise EditRefused(f"{source}: {name} in the env of {what} comes from valueFrom (line "
                              f"{source_of.start_mark.line + 1}); expected a literal value: to rewrite")

        def same(node: ScalarNode) -> bool:
            existing = constructed(node)
            return isinstance(existing, str) and existing == value

        given = mapping_entry(item, "value", source) if isinstance(item, MappingNode) else None
        if given is not None and not is_empty(given[1]):  # a double-quoted scalar reads the same in a flow item
            scalar = editable_scalar(given[1], f"env {name} of {what}", text, source, shared)
            return [] if same(scalar) else [TextEdit(scalar.start_mark.index, scalar.end_mark.index, written, why)]
        return set_in_mapping(text, item, ("value",), lambda node: written, same, why, source, shared, found.step,
                              where=f"env {name} of {what}")
    last = env.value[-1]
    dash, content = _dash(text, last)
    flow = isinstance(last, MappingNode) and bool(last.flow_style)
    at = line_after(text, content_end(env))
    return [insert_lines(text, at, _env_item(name, written, dash, content, flow), why)]
