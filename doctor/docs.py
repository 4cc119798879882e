"""Documentation generated from rules.yaml: the README rules table (kept fresh by a test)."""

from __future__ import annotations

from .rules import AREAS, Rulebook

README_START = "<!-- rules-table:start (generated from rules.yaml by `paddle-doctor rules --markdown`) -->"
README_END = "<!-- rules-table:end -->"
CHECKED = {"stable": "yes", "planned": "not yet", "removed": "removed"}


def rules_table_markdown(rulebook: Rulebook) -> str:
    lines = ["| id | area | severity | checked | experiment | title |", "|---|---|---|---|---|---|"]
    for rule in rulebook.ordered():
        lines.append(
            f"| {rule.id} | {AREAS[rule.area]} | {rule.severity} | {CHECKED[rule.status]} | "
            f"{rule.experiment or '-'} | {rule.title} |"
        )
    return "\n".join(lines) + "\n"


def replace_readme_table(readme: str, table: str) -> str:
    start, end = readme.index(README_START) + len(README_START), readme.index(README_END)
    return readme[:start] + "\n" + table + readme[end:]
