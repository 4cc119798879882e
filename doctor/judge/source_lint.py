"""What the source lint checks share: one finding per rule, with the source lines it is about."""

from __future__ import annotations

from ..base.vocabulary import SourcePatternKind
from ..facts import Facts, SourceLocation, SourceSetting
from .findings import Finding, Status, passed, skipped


def source_finding(facts: Facts, rule: str, found: list[tuple[SourceLocation, str]], problem: str,
                   expected: str, fine: str, status: Status = Status.FAIL, conditional: bool = False) -> list[Finding]:
    """Pass when nothing was ``found``, else one finding naming every place (a check using it requires
    Need.SOURCE); skipped when the source read builds no Config: then it has nothing to say.
    ``conditional``: every place found is in a branch the source alone does not tell runs, so the
    finding is a warning at most, saying so."""
    source = facts.service_source
    if not source.configs:
        read = ", ".join(source.files[:3]) + (f" and {len(source.files) - 3} more" if len(source.files) > 3 else "")
        return [skipped(rule, f"no paddle.inference.Config is built in the {len(source.files)} Python "
                              f"file{'s' if len(source.files) != 1 else ''} read ({read or 'none'})")]
    if not found:
        return [passed(rule, fine)]
    places = "; ".join(f"{location}: {what}" for location, what in found)
    locations = list({str(location): location for location, _ in found}.values())
    if conditional:
        status = Status.WARN if status == Status.FAIL else status
        problem = f"{problem} in a branch that may not run"
    return [Finding(rule, status, f"{problem} at {', '.join(map(str, locations))}",
                    observed=places, expected=expected, locations=locations)]


def placed(setting: SourceSetting, what: str | None = None) -> tuple[SourceLocation, str]:
    """A setting's line and code for a finding, with the condition it is made under."""
    what = what or setting.code
    return setting.location, what if setting.condition is None else f"{what}, only if {setting.condition}"


def settings_finding(facts: Facts, rule: str, found: list[tuple[SourceSetting, str | None]], problem: str,
                     expected: str, fine: str) -> list[Finding]:
    """``source_finding`` for settings (each with what to say of it, its code when None): a warning
    at most when every one of them is made under a condition."""
    return source_finding(facts, rule, [placed(setting, what) for setting, what in found], problem, expected, fine,
                          conditional=bool(found) and all(setting.conditional for setting, _ in found))


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
    return settings_finding(facts, rule, [(setting, None) for setting in settings_set_to(facts, name, False)],
                            problem, expected, fine)


def patterns_of(facts: Facts, kind: SourcePatternKind) -> list[tuple[SourceLocation, str]]:
    return [(pattern.location, pattern.detail) for pattern in facts.service_source.patterns if pattern.kind == kind]
