"""The report as JUnit XML, for the test-report views of GitLab, Jenkins and other CI systems.

One testcase per finding, that is per rule, not per check: one check decides several rules that pass
and fail independently (``cpu_budget`` decides PD-CPU-010 and PD-CPU-011), and a failure must carry
exactly one rule id. Testsuites are the rule areas. A testcase fails exactly when its finding
counts towards the exit code, so the CI view and the job's status agree: a fail or warn at or above
``--fail-on`` is a ``<failure>``, an error (the doctor could not verify the rule) an ``<error>``; a
problem below the threshold passes with a note. Skipped rules are ``<skipped>``. Every testcase
names its rule's docs (in the failure, or in ``<system-out>``). No timestamps or durations: the same facts give the
same bytes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..base.escape import terminal_text
from ..base.vocabulary import Status
from ..report.report import Report, ReportFinding, counts_against

NOT_XML = re.compile("[\ufffe\uffff]")  # the noncharacters XML 1.0 cannot carry, that terminal_text leaves


def render_junit(report: Report) -> str:
    root = ET.Element("testsuites", name="paddle-doctor")
    for area in dict.fromkeys(f.area for f in report.findings):
        suite = _suite(root, report.areas.get(area, area))
        for finding in (f for f in report.findings if f.area == area):
            _testcase(suite, finding, report.fail_on)
        _count(suite)
    if report.check_errors:
        suite = _suite(root, "Checks that could not be loaded")
        for failure in report.check_errors:
            case = ET.SubElement(suite, "testcase", name=_clean(failure.entry_point), classname="paddle-doctor.registry")
            ET.SubElement(case, "error", message=_clean(failure.reason), type="check-load-error").text = _clean(
                f"{failure.entry_point}: {failure.reason}"
            )
        _count(suite)
    _count(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(root: ET.Element, name: str) -> ET.Element:
    return ET.SubElement(root, "testsuite", name=f"paddle-doctor: {name}")


def _testcase(suite: ET.Element, finding: ReportFinding, fail_on: str) -> None:
    case = ET.SubElement(suite, "testcase", name=_clean(f"{finding.rule_id} {finding.title}"),
                         classname=f"paddle-doctor.{finding.check}")
    if counts_against(finding, fail_on):
        tag = "error" if finding.status == Status.ERROR else "failure"
        ET.SubElement(case, tag, message=_clean(finding.message), type=finding.rule_id).text = _clean(_details(finding))
        return
    if not finding.status.is_problem:
        if finding.status == Status.SKIP:
            ET.SubElement(case, "skipped", message=_clean(finding.message))
        note = f"{finding.status}: {finding.message}" + (f"\ndocs: {finding.docs_link}" if finding.docs_link else "")
    else:
        note = f"{finding.status} below --fail-on {fail_on} (severity {finding.severity})\n{_details(finding)}"
    ET.SubElement(case, "system-out").text = _clean(note)


def _details(finding: ReportFinding) -> str:
    lines = [f"{finding.rule_id} ({finding.severity}, {finding.status}): {finding.title}", finding.message]
    if finding.observed:
        lines.append(f"observed: {finding.observed}")
    if finding.expected:
        lines.append(f"expected: {finding.expected}")
    if finding.status != Status.ERROR:
        lines.append(f"cause: {finding.cause}")
        lines.append(f"fix: {finding.fix.text}")
        lines.extend(f"  {change.kind}: {change.code}" for change in finding.fix.changes)
    lines.append(f"more: {finding.explain}")
    if finding.docs_link:
        lines.append(f"docs: {finding.docs_link}")
    return "\n".join(lines)


def _count(element: ET.Element) -> None:
    """tests/failures/errors/skipped attributes, counted from the testcases below."""
    cases = element.findall(".//testcase")
    element.set("tests", str(len(cases)))
    for tag, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attribute, str(sum(1 for case in cases if case.find(tag) is not None)))


def _clean(text: str) -> str:
    """Text XML 1.0 can carry, shown as the text report shows it: control characters from a probed
    file written out (``\\x1b``), never dropped nor sent to the CI log's terminal."""
    return NOT_XML.sub("", terminal_text(text))
