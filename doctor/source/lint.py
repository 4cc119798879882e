"""What the source lint checks share: one finding per rule, with the source lines it is about."""

from __future__ import annotations

from ..facts import Facts, SourceLocation, SourceSetting
from ..findings import Finding, Status, passed, skipped
from ..vocabulary import SourcePatternKind


def source_finding(facts: Facts, rule: str, found: list[tuple[SourceLocation, str]], problem: str,
                   expected: str, fine: str, status: Status = Status.FAIL) -> list[Finding]:
    """Pass when nothing was ``found``, else one finding naming every place (a check using it requires Need.SOURCE)."""
    if not found:
        return [passed(rule, fine)]
    places = "; ".join(f"{location}: {what}" for location, what in found)
    locations = list({str(location): location for location, _ in found}.values())
    return [Finding(rule, status, f"{problem} at {', '.join(map(str, locations))}",
                    observed=places, expected=expected, locations=locations)]


def settings_set_to(facts: Facts, name: str, value: object) -> list[SourceSetting]:
    """The source's settings of ``name`` to exactly ``value`` (``False`` is not ``0``)."""
    return [setting for setting in facts.service_source.settings
            if setting.name == name and setting.evaluated and type(setting.value) is type(value) and setting.value == value]


def switched_off(facts: Facts, rule: str, name: str, judged_by: str, what: str, problem: str, expected: str,
                 fine: str) -> list[Finding]:
    """The source's lines that set ``name`` to False. Where they decide the service's setting, the
    rule judging the setting (``judged_by``) reports them and ``rule`` names it: one line, one finding."""
    deciding = facts.lines_deciding(name)
    if deciding:
        return [skipped(rule, f"{judged_by} reports {', '.join(map(str, deciding))}: {what} comes from this code")]
    found = [(setting.location, setting.code) for setting in settings_set_to(facts, name, False)]
    return source_finding(facts, rule, found, problem, expected, fine)


def patterns_of(facts: Facts, kind: SourcePatternKind) -> list[tuple[SourceLocation, str]]:
    return [(pattern.location, pattern.detail) for pattern in facts.service_source.patterns if pattern.kind == kind]
