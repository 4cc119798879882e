"""Documentation generated from rules.yaml and known_issues.yaml: docs/rules.md and docs/known_issues.md,
each opening with its table (kept fresh by tests), the listing of `paddle-doctor rules`, and the link from a
finding to its rule's section there."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .rules import AREAS, SAFETY_MEANING, Rule, Rulebook

if TYPE_CHECKING:
    from .known_issues import KnownIssue, KnownIssueBook

RULES_TABLE_START = "<!-- rules-table:start (generated from rules.yaml by `paddle-doctor rules --markdown`) -->"
RULES_TABLE_END = "<!-- rules-table:end -->"
KNOWN_ISSUES_START = "<!-- known-issues-table:start (generated from known_issues.yaml by scripts/update-readme-rules) -->"
KNOWN_ISSUES_END = "<!-- known-issues-table:end -->"
KNOWN_ISSUES_LIST_START = "<!-- known-issues-list:start (generated from known_issues.yaml by scripts/update-readme-rules) -->"
KNOWN_ISSUES_LIST_END = "<!-- known-issues-list:end -->"
KNOWN_ISSUES_DOC = "docs/known_issues.md"
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


def rules_table_markdown(rulebook: Rulebook, linked: bool = False) -> str:
    """Every rule, one row each (`paddle-doctor rules --markdown`); ``linked``: each id a link to its
    section of docs/rules.md, where the table heads the page."""
    lines = ["| id | area | severity | checked | experiment | title |", "|---|---|---|---|---|---|"]
    for rule in rulebook.ordered():
        name = f"[{rule.id}](#{rule.id.lower()})" if linked else rule.id
        lines.append(
            f"| {name} | {AREAS[rule.area]} | {rule.severity} | {CHECKED[rule.status]} | "
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
        "gives, and writes the others as `<name>`, a template to fill in. A fix's safety says whether "
        "applying it keeps the service's outputs (`safe`: threads, cache bounds and folders, warm-up; "
        "`paddle-doctor fix` applies it) or may change its outputs or behaviour (`unsafe`: a precision, "
        "IR passes, a Paddle pin, the worker count; applied only with `--unsafe-fixes`)."),
        "",
    ]
    parts.extend([RULES_TABLE_START, rules_table_markdown(rulebook, linked=True) + RULES_TABLE_END, "",
                  '"checked: not yet" rules are part of the checklist; their checks are still to come.'])
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
    lines.extend(["", f"Safety: `{rule.fix_safety}` — {SAFETY_MEANING[rule.fix_safety]}."])
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


# ---------------------------------------------------------------------------- known problems


def known_issues_table_markdown(book: KnownIssueBook) -> str:
    """The table that heads docs/known_issues.md: id (a link to its section), kind, the rule it is reported under,
    what it affects, the release that fixes it, title."""
    from .known_issues import affected

    lines = ["| id | kind | rule | affects | fixed in | title |", "|---|---|---|---|---|---|"]
    for entry in book.entries:
        lines.append(f"| [{entry.id}](#{entry.id.lower()}) | {entry.kind} | [{entry.rule}](rules.md#{entry.rule.lower()}) | "
                     f"{'; '.join(affected(entry))} | {entry.fixed_in or '-'} | {entry.title} |")
    return "\n".join(lines) + "\n"


def known_issues_list_markdown(book: KnownIssueBook, page: str = "") -> str:
    """A line per known problem, linked to its section of ``page`` (docs/known_issues.md, or the page itself)."""
    return "".join(f"- [{entry.id}]({page}#{entry.id.lower()}) ({entry.kind}): {entry.title}\n" for entry in book.entries)


def with_known_issues_list(readme: str, book: KnownIssueBook) -> str:
    """The README with its list of the known problems written anew between its markers."""
    head, _, rest = readme.partition(KNOWN_ISSUES_LIST_START)
    _, _, tail = rest.partition(KNOWN_ISSUES_LIST_END)
    return f"{head}{KNOWN_ISSUES_LIST_START}\n{known_issues_list_markdown(book, KNOWN_ISSUES_DOC)}{KNOWN_ISSUES_LIST_END}{tail}"


def known_issues_listing(book: KnownIssueBook, width: int) -> str:
    """`paddle-doctor rules`, after the rules: the known problems by the rule each is a finding of; on a terminal of
    WIDE_LISTING columns or more one line each with its kind and title, else their ids (``explain`` shows one)."""
    import textwrap

    entries = book.entries
    if not entries:
        return ""
    lines = ["", *textwrap.wrap(f"Known problems ({', '.join(book.named_sources())}) by rule; explain KI-NNN shows one:", width,
                                break_on_hyphens=False)]
    rules = list(dict.fromkeys(entry.rule for entry in entries))
    rule_width = max(len(rule) for rule in rules)
    if width < WIDE_LISTING:
        for rule in rules:
            ids = " ".join(entry.id for entry in entries if entry.rule == rule)
            wrapped = textwrap.wrap(ids, max(20, width - rule_width - 2))
            lines.append(f"{rule:<{rule_width}}  {wrapped[0]}")  # unindented, as the rule heads its entries on a wide terminal
            lines.extend(" " * (rule_width + 2) + rest for rest in wrapped[1:])
        return "\n".join(lines) + "\n"
    id_width = max(len(entry.id) for entry in entries)
    kind_width = max(len(entry.kind) for entry in entries)
    indent = 2 + id_width + 2 + kind_width + 2
    for rule in rules:
        lines.append(rule)
        for entry in (entry for entry in entries if entry.rule == rule):
            wrapped = textwrap.wrap(entry.title, width - indent)
            lines.append(f"  {entry.id:<{id_width}}  {entry.kind:<{kind_width}}  {wrapped[0]}")
            lines.extend(" " * indent + rest for rest in wrapped[1:])
    return "\n".join(lines) + "\n"


ADDING_AN_ENTRY = """\
## Adding an entry

An entry is data: add it to `known_issues.yaml` (a new id, never reused), or keep a team's own in a file
of the same form and pass it with `--known-issues FILE` (to `check`, `facts`, `rules` and `explain`; its ids
need a prefix of their own, such as `ACME-001`). The file is validated when it is read: a wrong field is one
line naming the file, the entry and the field, and the doctor exits 2. The fields:

- `id`: `KI-NNN` (a team's file: `PREFIX-NNN`); `title`: what goes wrong, in one line; `kind`: `crash`,
  `wrong_result` (reported under PD-PADDLE-004), `slow`, `memory`, `ignored_setting` (PD-PADDLE-005),
  `deprecated` or `notice` (PD-PADDLE-006).
- `affects`: each package and its version range (`">=3.3.0,<=3.3.1"`, `"==2.5.0"`, `"==3.3.*"`, `"*"` for any):
  `paddle` (either wheel), `paddlepaddle`, `paddlepaddle-gpu`, `onednn`, `cuda`, `cudnn` (the wheel's builds),
  `tensorrt`, or the distribution of a wrapper that builds the predictor (`paddleocr`, `paddlex`,
  `paddlenlp`, `rapidocr-paddle`). Every package must be at a version in its range.
- `when` (every part given must hold): `device` (`cpu`, `gpu`); `settings`: switches of the predictor's
  configuration, each `true` or `false`, Paddle's defaults filled in (the switches of `doctor/facts/knobs.py`:
  {switches}); `tensorrt` (`true`, `false`); `passes` (passes that must run: the service deletes not
  every one); `calls` (Config methods the service's source calls, each mapped to the one that replaces it, or `null`); `env_unset` (variables the
  service starts without); `compute_capability` (a range, such as `">=12.0"`); `wheel_has_gpu_arch`;
  `model`: `formats` (`pir`, `pdmodel`, `legacy`), and either a program with one of `ops` (with an
  `attribute` of a type such as `array<f64>`: the types as the PIR file names them) or a predictor
  `built_by` one of the wrappers given with their ranges.
- `symptom`: what the user sees; `error`: the text of Paddle's message by which the predictor worker
  recognises a crash (with `--model`, the service's configuration is loaded there anyway).
- `fixed_in`: the first release with the fix, or `null`; `fixed_by`: what fixed it (a pull request).
- `workaround`: `text`, `changes` (each a `kind`, as in rules.yaml, and its `code`: a pin, a Config call, a
  wrapper's keyword), and `measure`: the switches the worker changes to measure it (as in `settings`).
- `links`: the public threads (https); `checked`: where the entry was verified (reproduced, and with which
  Paddle, or read in the threads only).

Quote a value that holds ` #` (YAML reads the rest as a comment). Regenerate this page with
`scripts/update-readme-rules`; `tests/test_known_issues.py` fails while it is stale.
"""


def known_issues_doc_markdown(book: KnownIssueBook) -> str:
    """docs/known_issues.md: how an entry is matched and added, then one section per entry."""
    from ..facts.knobs import switches

    parts = [
        "# Known problems paddle-doctor knows",
        "",
        "<!-- generated from known_issues.yaml by scripts/update-readme-rules; edit known_issues.yaml, not this file -->",
        "",
        ("The problems Paddle users hit, by version, each named before it is hit. An entry holds where every package "
         "it affects is installed at a version in its range and every part of its condition holds, for the service "
         "or one of the predictors its record names (each judged with its own configuration and, with `--measure`, "
         "its own model); where the facts cannot tell (no model read, no source, no record), the finding says what "
         "is missing. With `--model` or `--measure`, a crash an entry predicts for the service's configuration is "
         "tried in the predictor worker, and its workaround is measured there: the finding says confirmed, or not "
         "reproduced. An experiment or the recommended configuration never measures nor offers a setting such an "
         "entry predicts to fail. `paddle-doctor explain KI-NNN` prints an entry in a terminal."),
        "",
        KNOWN_ISSUES_START,
        known_issues_table_markdown(book) + KNOWN_ISSUES_END,
        "",
        ADDING_AN_ENTRY.replace("{switches}", ", ".join(f"`{name}`" for name in switches())).rstrip("\n"),
    ]
    for entry in book.entries:
        parts.extend(["", *_known_issue_section(entry)])
    return "\n".join(parts) + "\n"


def _known_issue_section(entry: KnownIssue) -> list[str]:
    from .known_issues import affected, condition_words, short_link, switched

    when = condition_words(entry.when)
    lines = [f"## {entry.id}", "", f"**{entry.title}.**", "",
             f"`{entry.kind}` · reported under [{entry.rule}](rules.md#{entry.rule.lower()}) · {entry.fixed()}", "",
             f"Affects: {'; '.join(affected(entry))}" + (f"; when {'; '.join(when)}." if when else "."), "",
             f"Symptom: {entry.symptom}"]
    if entry.error:
        lines.extend(["", f"Recognised in the predictor worker by Paddle's message: `{entry.error}`"])
    lines.extend(["", "### Workaround", "", entry.workaround.text])
    for change in entry.workaround.changes:
        lines.extend(["", f"```{FENCE_LANGUAGE[change.kind]}", change.code, "```"])
    if entry.workaround.measure:
        settings = ", ".join(switched(name, on) for name, on in entry.workaround.measure.items())
        lines.extend(["", f"Measured in the predictor worker as: {settings}."])
    lines.extend(["", "### Threads", ""])
    lines.extend(f"- [{short_link(url)}]({url})" if short_link(url) != url else f"- <{url}>" for url in entry.links)
    lines.extend(["", f"Checked: {entry.checked}", "", f"`{entry.explain_command}`"])
    return lines
