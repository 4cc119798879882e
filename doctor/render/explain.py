"""``paddle-doctor explain ID``: one rule in full, its fix filled in for this machine where it can be.

The values a fix takes from the CPU budget (``{budget}``, ``{threads_per_instance}``) are read from
this container's cgroup, cpuset and affinity, as the checks read them. Every other value is known
only to a finding (a driver version, a cache folder): it stays a placeholder, written ``<name>``
and labelled a template, so that no line reads as code that can be pasted (``<name>`` is a syntax
error in Python, and in a shell a redirection from a file that does not exist, which stops the
command before it runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from ..facts.budget import cpu_budget
from ..judge.rules import Rule
from ..report.report import PLACEHOLDER, fill_placeholders

if TYPE_CHECKING:
    from ..judge.known_issues import KnownIssue

MACHINE_PLACEHOLDERS = ("budget", "threads_per_instance")  # what the CPU budget of this machine fills in


@dataclass(frozen=True)
class MachineValues:
    """What this machine says of the placeholders it can fill, and how it knows."""

    values: dict[str, int]
    how: str


@dataclass(frozen=True)
class FixBlock:
    """One change of a rule's fix as explain prints it: filled in, or a template with what is missing."""

    kind: str
    code: str
    missing: tuple[str, ...]

    @property
    def is_template(self) -> bool:
        return bool(self.missing)


def machine_values(instances: int = 1, root: str = "/") -> MachineValues:
    """The CPU budget's placeholders, probed here (no Paddle, no NVML)."""
    from ..facts.predictor import ServiceConfig
    from ..probes import collect_facts
    from ..probes.context import ProbeContext

    budget = cpu_budget(collect_facts(ProbeContext(root), ServiceConfig(instances=instances), None, 1.0))
    if budget is None:
        return MachineValues({}, "the CPU budget of this machine is unknown")
    per_instance = budget.threads_per_instance(instances)
    how = (f"filled in for this machine: a budget of {budget.describe()}, {instances} instance{'s' if instances > 1 else ''}"
           f" ({per_instance} threads each; --instances K for another split)")
    return MachineValues(dict(zip(MACHINE_PLACEHOLDERS, (budget.whole_cpus, per_instance))), how)


def fix_blocks(rule: Rule, known: MachineValues | None) -> list[FixBlock]:
    blocks = []
    for change in rule.fix_changes:
        filled = fill_placeholders(change.code, known.values if known else {}, change.kind)
        missing = tuple(dict.fromkeys(PLACEHOLDER.findall(filled)))
        blocks.append(FixBlock(change.kind, PLACEHOLDER.sub(r"<\1>", filled), missing))
    return blocks


def needs_machine(rule: Rule) -> bool:
    """Whether the rule's fix has a placeholder this machine can fill (then explain probes it)."""
    return any(name in MACHINE_PLACEHOLDERS for change in rule.fix_changes for name in PLACEHOLDER.findall(change.code))


def render_explain(rule: Rule, known: MachineValues | None, docs: list[str], console: Console) -> None:
    """The rule's text wraps to the terminal; code and links are printed whole, never wrapped nor
    indented, so what a terminal copies is what runs (or, for a template, what to fill in)."""
    from ..base.escape import terminal_line, terminal_text
    from .text import print_code

    console.print(Text.assemble((rule.id, "bold"), f" {rule.slug} — {rule.title}"))
    console.print(Text(terminal_text(f"severity: {rule.severity}; status: {rule.status}; experiment: {rule.experiment or 'none'}")),
                  highlight=False)
    for label, value in (("Symptom", rule.symptom), ("Cause", rule.cause), ("Fix", rule.fix_text)):
        console.print()
        console.print(Text(label, style="bold"))
        console.print(Text(terminal_text(value)), highlight=False)
    console.print(Text(terminal_text(rule.safety_line)), highlight=False)
    if known is not None:
        console.print(Text(known.how, style="dim"))
    for block in fix_blocks(rule, known):
        if block.is_template:
            names = ", ".join(f"<{name}>" for name in block.missing)
            console.print(Text(f"{block.kind}, a template: fill in {names}", style="yellow"))
        else:
            console.print(Text(f"{block.kind}:", style="dim"))
        print_code(console, block.code)
    console.print()
    console.print(Text("Docs", style="bold"))
    for link in docs:
        console.print(Text(terminal_line(link)), soft_wrap=True, highlight=False)


def render_known_issue(entry: KnownIssue, rule: Rule | None, console: Console) -> None:
    """A known problem as a rule is shown: what it affects and when, its symptom and fix, its workaround
    (code printed whole, never wrapped), its threads and the rule its findings are reported under."""
    from ..base.escape import terminal_line, terminal_text
    from ..judge.known_issues import affected, condition_words
    from .text import print_code

    console.print(Text.assemble((entry.id, "bold"), f" {entry.kind} — {entry.title}"))
    reported = f"{entry.rule} ({rule.title})" if rule is not None else entry.rule
    console.print(Text(terminal_text(f"reported under {reported}; {entry.fixed()}")), highlight=False)
    when = condition_words(entry.when)
    sections = [("Affects", "; ".join(affected(entry)) + (f"; when {'; '.join(when)}" if when else "")),
                ("Symptom", entry.symptom), ("Workaround", entry.workaround.text)]
    for label, value in sections:
        console.print()
        console.print(Text(label, style="bold"))
        console.print(Text(terminal_text(value)), highlight=False)
    for change in entry.workaround.changes:
        console.print(Text(f"{change.kind}:", style="dim"))
        print_code(console, change.code)
    if entry.error:
        console.print(Text(terminal_text(f"The predictor worker (--model) recognises it by Paddle's message: {entry.error}"), style="dim"))
    console.print()
    console.print(Text("Threads", style="bold"))
    for link in entry.links:
        console.print(Text(terminal_line(link)), soft_wrap=True, highlight=False)
    console.print(Text(terminal_text(f"Checked: {entry.checked}"), style="dim"))
