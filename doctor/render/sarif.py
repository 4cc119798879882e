"""The report as SARIF 2.1.0, for code-scanning views and SARIF viewers.

``runs[0].tool.driver.rules`` lists every rule of rules.yaml (id, slug as name, title, symptom and
cause, the fix as help text, the docs link); ``results`` hold the findings that are problems: a fail
or warn is ``kind: fail`` with the level mapped from its severity, an error (the doctor could not
verify the rule) is ``kind: review``. A finding about a line of the service's source carries a
``physicalLocation`` (file, line), so code scanning annotates that line. Passed and skipped rules are not results. ``helpUri`` is set
only when the docs are published somewhere (PADDLE_DOCTOR_DOCS_URL or docs_url), since SARIF wants
an absolute URI there. Keys are sorted and nothing carries a timestamp: the same facts give the
same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..base.escape import uri_path
from ..base.serde import to_data
from ..base.vocabulary import Severity, Status
from ..facts import SourceLocation
from ..judge.rule_docs import FENCE_LANGUAGE, docs_link, is_absolute_url
from ..judge.rules import AREAS, Rule, Rulebook
from ..report.report import Report, ReportFinding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def render_sarif(report: Report, rulebook: Rulebook, page: str) -> str:
    rules = rulebook.ordered()
    index = {rule.id: position for position, rule in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": report.tool.name,
                "version": report.tool.version,
                "rules": [_descriptor(rule, page) for rule in rules],
            }
        },
        "results": [_result(finding, index) for finding in report.findings if finding.status.is_problem],
        "invocations": [
            {
                "executionSuccessful": not report.check_errors,
                "exitCode": report.exit_code,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": f"check could not be loaded: {failure.entry_point}: {failure.reason}"}}
                    for failure in report.check_errors
                ],
            }
        ],
        # the service's settings and where each came from (flag, --config, a source line with its variable)
        "properties": {"fail_on": report.fail_on,
                       "service_settings": [{"name": s.name, "value": s.value, "origin": s.origin, "detail": s.detail}
                                            for s in (report.service.settings if report.service else [])]},
    }
    document = {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _descriptor(rule: Rule, page: str) -> dict[str, Any]:
    link = docs_link(rule.id, page)
    changes = [f"{change.kind}: {change.code}" for change in rule.fix_changes]
    markdown_changes = [f"```{FENCE_LANGUAGE[change.kind]}\n{change.code}\n```" for change in rule.fix_changes]
    descriptor: dict[str, Any] = {
        "id": rule.id,
        "name": rule.slug,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": f"{rule.symptom} Cause: {rule.cause}"},
        "help": {
            "text": "\n".join([f"Fix: {rule.fix_text}", *changes, f"Docs: {link}"]),
            "markdown": "\n\n".join([f"**Fix:** {rule.fix_text}", *markdown_changes, f"Docs: {link}"]),
        },
        "defaultConfiguration": {"level": LEVEL[rule.severity], "enabled": rule.status != "removed"},
        "properties": {
            "area": AREAS[rule.area],
            "status": rule.status,
            "experiment": rule.experiment,
            "docs": link,
            "references": list(rule.docs),
            "tags": [rule.area.lower(), rule.status],
        },
    }
    if is_absolute_url(link):
        descriptor["helpUri"] = link
    return descriptor


def _result(finding: ReportFinding, index: dict[str, int]) -> dict[str, Any]:
    text = finding.message
    if finding.observed or finding.expected:
        text += f" (observed: {finding.observed or '?'}; expected: {finding.expected or '?'})"
    result: dict[str, Any] = {
        "ruleId": finding.rule_id,
        "kind": "review" if finding.status == Status.ERROR else "fail",
        "level": "none" if finding.status == Status.ERROR else LEVEL[finding.severity],
        "message": {"text": text},
        "properties": {
            "status": finding.status,
            "severity": finding.severity,
            "check": finding.check,
            "fix": to_data(finding.fix.changes),
            "docs": finding.docs_link,
        },
    }
    if finding.rule_id in index:
        result["ruleIndex"] = index[finding.rule_id]
    if finding.locations:
        result["locations"] = [_physical_location(location) for location in finding.locations]
    return result


def artifact_uri(file: str) -> str:
    """A path under the working directory (the repository, in CI) relative to it, as code scanning
    resolves it; any other path as an absolute file URI (never a ``../`` path nothing can resolve).
    Both percent-encoded, so a ``#``, ``;`` or space in a name stays part of the path."""
    resolved = (Path.cwd() / file).resolve()
    try:
        return uri_path(resolved.relative_to(Path.cwd().resolve()).as_posix())
    except ValueError:
        return resolved.as_uri()


def _physical_location(location: SourceLocation) -> dict[str, Any]:
    """A source line, at a path code scanning can resolve."""
    uri = artifact_uri(location.file)
    return {"physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": max(location.line, 1)}}}
