"""Documentation generated from rules.yaml: the README rules table and docs/rules.md (kept fresh by
tests), the listing of `paddle-doctor rules`, and the link from a finding to its rule's section there."""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from .rules import AREAS, Rule, Rulebook

README_START = "<!-- rules-table:start (generated from rules.yaml by `paddle-doctor rules --markdown`) -->"
README_END = "<!-- rules-table:end -->"
CHECKED = {"stable": "yes", "planned": "not yet", "removed": "removed"}
WIDE_LISTING = 120  # columns from which `paddle-doctor rules` shows each rule's experiment
LISTED_STATUS = {"planned": "not yet checked", "removed": "removed"}

RULES_DOC = "docs/rules.md"
DOCS_URL_ENV = "PADDLE_DOCTOR_DOCS_URL"
FENCE_LANGUAGE = {"python": "python", "env": "sh", "dockerfile": "dockerfile", "shell": "sh",
                  "kubernetes": "yaml", "yaml": "yaml", "text": "text"}
NOT_IN_A_URL = re.compile(r"[\x00-\x20\x7f\"'<>\\`]")
LIFECYCLE_TEXT = {
    "stable": "checked",
    "planned": "planned (in the checklist; no check evaluates it yet)",
    "removed": "removed (kept so that its id is never reused)",
}


def rules_table_markdown(rulebook: Rulebook) -> str:
    lines = ["| id | area | severity | checked | experiment | title |", "|---|---|---|---|---|---|"]
    for rule in rulebook.ordered():
        lines.append(
            f"| {rule.id} | {AREAS[rule.area]} | {rule.severity} | {CHECKED[rule.status]} | "
            f"{rule.experiment or '-'} | {rule.title} |"
        )
    return "\n".join(lines) + "\n"


def rules_listing(rulebook: Rulebook, width: int) -> str:
    """`paddle-doctor rules`: the rules under their areas, one line each where the title fits; the
    experiment that measures a fix in a last column where the width leaves room for it."""
    import textwrap

    rules = rulebook.ordered()
    id_width, severity_width = max(len(rule.id) for rule in rules), max(len("severity"), *(len(rule.severity) for rule in rules))
    titles = {rule.id: rule.title + ("" if rule.status == "stable" else f" ({LISTED_STATUS[rule.status]})") for rule in rules}
    indent = 2 + id_width + 2 + severity_width + 2
    with_experiment = width >= WIDE_LISTING
    experiment_width = max(len(rule.experiment or "-") for rule in rules) + 2 if with_experiment else 0
    title_width = min(max(map(len, titles.values())), width - indent - experiment_width)
    lines = [f"  {'id':<{id_width}}  {'severity':<{severity_width}}  " + (f"{'title':<{title_width}}  experiment" if with_experiment else "title")]
    for area, area_title in AREAS.items():
        in_area = [rule for rule in rules if rule.area == area]
        if in_area:
            lines.append(area_title)
        for rule in in_area:
            wrapped = textwrap.wrap(titles[rule.id], title_width)
            first = f"  {rule.id:<{id_width}}  {rule.severity:<{severity_width}}  {wrapped[0]}"
            lines.append(f"{first:<{indent + title_width}}  {rule.experiment or '-'}" if with_experiment else first)
            lines.extend(" " * indent + rest for rest in wrapped[1:])
    lines += ["", "paddle-doctor explain ID: one rule in full, and the experiment of its fix"]
    return "\n".join(lines) + "\n"


def replace_readme_table(readme: str, table: str) -> str:
    start, end = readme.index(README_START) + len(README_START), readme.index(README_END)
    return readme[:start] + "\n" + table + readme[end:]


class DocsUrlError(ValueError):
    """$PADDLE_DOCTOR_DOCS_URL is no https URL: a report would link to whatever it names."""


def is_https_url(text: str) -> bool:
    """An absolute https URL with a host, and nothing a page or a terminal would read as more than a URL."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return parts.scheme == "https" and bool(parts.hostname) and not NOT_IN_A_URL.search(text)


def docs_page(configured: str | None = None) -> str:
    """Where the rules page lives: $PADDLE_DOCTOR_DOCS_URL (an https URL), else the settings' docs_url,
    else the repository-relative docs/rules.md."""
    published = os.environ.get(DOCS_URL_ENV)
    if published and not is_https_url(published):
        raise DocsUrlError(f"{DOCS_URL_ENV} is {published[:80]!r}; expected the https:// URL where docs/rules.md is published")
    return published or configured or RULES_DOC


def docs_link(rule_id: str, page: str) -> str:
    """The rule's section on the rules page; the anchor is the id in lower case (``#pd-cpu-010``)."""
    return f"{page}#{rule_id.lower()}"


def is_absolute_url(link: str) -> bool:
    return link.startswith(("https://", "http://"))


def rules_doc_markdown(rulebook: Rulebook) -> str:
    """docs/rules.md: one section per rule with fixed headings, in the order of `paddle-doctor rules`."""
    rules = rulebook.ordered()
    parts = [
        "# paddle-doctor rules",
        "",
        "<!-- generated from rules.yaml by scripts/update-readme-rules; edit rules.yaml, not this file -->",
        "",
        ("Every finding links to its rule's section here (`docs/rules.md#pd-cpu-010`); "
        f"set `{DOCS_URL_ENV}` or `docs_url` in the settings file to the address where this page is "
        "published and the links point there instead. `paddle-doctor explain ID` prints the same in a "
        "terminal. Words in braces in a fix, such as `{threads_per_instance}`, are filled in with the "
        "values the doctor measured when it reports the finding, quoted for the fix's language (a shell "
        "word, a Python string, a YAML scalar); `explain` fills in those the CPU budget of its machine "
        "gives, and writes the others as `<name>`, a template to fill in."),
        "",
    ]
    for area, title in AREAS.items():
        in_area = [rule for rule in rules if rule.area == area]
        if in_area:
            links = ", ".join(f"[{rule.id}](#{rule.id.lower()})" for rule in in_area)
            parts.append(f"- **{title}**: {links}")
    for rule in rules:
        parts.extend(["", *_rule_section(rule)])
    return "\n".join(parts) + "\n"


def _rule_section(rule: Rule) -> list[str]:
    lines = [
        f"## {rule.id}",
        "",
        f"`{rule.slug}` · {AREAS[rule.area]} · severity `{rule.severity}` · {LIFECYCLE_TEXT[rule.status]}",
        "",
        "### What it checks",
        "",
        f"Whether this holds in the container: **{rule.title}.**",
        "",
        f"Symptom: {rule.symptom}",
        "",
        "### Why it matters",
        "",
        rule.cause,
        "",
        "### Fix",
        "",
        rule.fix_text,
    ]
    for change in rule.fix_changes:
        lines.extend(["", f"```{FENCE_LANGUAGE[change.kind]}", change.code, "```"])
    lines.extend(["", "### Confirm (experiment)", ""])
    if rule.experiment:
        lines.append(
            f"`paddle-doctor --model PATH` runs the `{rule.experiment}` experiment: the service's model on "
            "the real predictor with and without the fix, interleaved, and says whether the fix helped."
        )
    else:
        lines.append(
            "No measurement applies: the finding is an installation or configuration fact. "
            "Run `paddle-doctor` again after the fix."
        )
    lines.extend(["", "### References", ""])
    lines.extend(f"- <{url}>" for url in rule.docs)
    lines.append(f"- `{rule.explain_command}`")
    return lines
