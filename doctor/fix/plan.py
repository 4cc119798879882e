"""What ``paddle-doctor fix`` changes: the measured recommendation and every failing finding's proposed setting,
each as one setting of the table (facts/knobs.py) with the value it moves to, the rule that asks it, whether
applying it is safe, and what its measurement said."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from ..base.vocabulary import Experiment, FixSafety, Origin, Status, Verdict
from ..facts import Facts
from ..facts.budget import cpu_budget
from ..facts.knobs import KNOBS, PREDICTOR_FIELDS, setting_of
from ..facts.predictor import PredictorConfig
from ..facts.verification import ComparisonResult, Recommendation
from ..judge.rules import Rulebook
from ..judge.weighing import Judged

RECOMMENDING_RULE = "PD-CFG-001"
OVER_BUDGET = "PD-CPU-010"  # more compute threads than the CPU budget  # the rule whose experiment is the search for the recommended configuration
EXPERIMENT_OF = {"precision": Experiment.BF16}  # the experiment that measures a PredictorConfig field, where not its name


@dataclass(frozen=True)
class Wanted:
    """One setting the fix moves: ``setting`` a row of the table of settings, ``value`` what the service's own
    files will say (the row's type), ``was`` what they say now (None: not said, Paddle's default); ``measured``
    the measurement behind it, for people; ``predictors`` the predictors it is about (empty: every one);
    ``also`` the other rules whose failing findings ask for the same setting (``--select`` of any keeps it)."""

    setting: str
    value: Any
    was: Any
    rule_id: str
    safety: FixSafety
    measured: str
    predictors: tuple[int, ...] = ()
    also: tuple[str, ...] = ()
    term: str | None = None  # what the user calls the setting where not its row's name (gunicorn's ``workers``)

    @property
    def rules(self) -> tuple[str, ...]:
        return (self.rule_id, *self.also)

    @property
    def why(self) -> str:
        """``PD-CPU-010 threads 8 -> 2 (measured 1.92x faster, 95% CI 1.71-2.10x) [safe]``: above its hunk."""
        return f"{self.rule_id} {self.term or self.setting} {said(self.was)} -> {said(self.value)} ({self.measured}) [{self.safety}]"


@dataclass(frozen=True)
class Passed:
    """A failing finding whose fix the plan leaves out, and why (measured within noise, or slower)."""

    rule_id: str
    setting: str
    why: str


@dataclass(frozen=True)
class Plan:
    wanted: list[Wanted]
    passed: list[Passed]


def said(value: Any) -> str:
    """A setting's value for people: ``unset`` for None, an enum's word, else as Python writes it."""
    if value is None:
        return "unset"
    return str(value.value) if isinstance(value, Enum) else str(value)


def gain_words(comparison: ComparisonResult) -> str:
    """``1.92x faster (95% CI 1.71-2.10x)``."""
    return (f"{comparison.ratio:.2f}x {'faster' if comparison.ratio >= 1 else 'slower'} "
            f"({comparison.confidence:.0%} CI {comparison.ci_low:.2f}-{comparison.ci_high:.2f}x)")


def measured_words(comparison: ComparisonResult | None, unmeasured: str = "--model or --measure measures it") -> str:
    return f"measured {gain_words(comparison)}" if comparison is not None else f"not measured: {unmeasured}"


def plan_fixes(facts: Facts, judged: list[Judged], rulebook: Rulebook) -> Plan:
    """The changes the report's findings and its recommendation ask for, one per setting: the recommendation's
    value where it measured one (it keeps every limit the doctor enforces), else the finding's proposal."""
    wanted: dict[str, Wanted] = {}
    passed: list[Passed] = []
    proposing: dict[str, list[Judged]] = {}  # per setting, the failing findings that propose it
    for one in judged:
        proposal = one.finding.proposal
        if one.status not in (Status.FAIL, Status.WARN) or proposal is None or not proposal.values or one.rule is None:
            continue
        setting = setting_of(proposal.setting)
        proposing.setdefault(setting, []).append(one)
        if one.finding.verdict in (Verdict.REFUTED, Verdict.UNDECIDED) and not proposal.binding:
            passed.append(Passed(one.rule_id, setting, f"its measurement was {one.finding.verdict}: the setting stays"))
            continue
        if one.status == Status.WARN and one.finding.verdict != Verdict.CONFIRMED:  # advice, not a fault: moved once measured
            passed.append(Passed(one.rule_id, setting, "a warning's fix is applied once its measurement confirms it "
                                                       "(--model or --measure)"))
            continue
        if setting in wanted:
            wanted[setting] = replace(wanted[setting], also=(*wanted[setting].also, one.rule_id))
            continue
        comparison = _own_comparison(facts, one)
        unsafe = comparison is not None and comparison.changes_outputs
        why = _not_measured(facts, one) if comparison is None else ""
        wanted[setting] = Wanted(setting, proposal.values[-1], _declared(facts, setting), one.rule_id,
                                 FixSafety.UNSAFE if unsafe else one.rule.fix_safety, measured_words(comparison, why),
                                 _predictors(one))
    recommendation = facts.verification.recommendation if facts.verification is not None else None
    if recommendation is not None:
        for change in _recommended(recommendation, rulebook, proposing):
            own = wanted.get(change.setting)
            if own is not None and change.safety == FixSafety.UNSAFE and own.safety == FixSafety.SAFE:
                continue  # the whole drifted: the finding's own change, safe as measured, stands
            wanted[change.setting] = replace(change, also=tuple(one.rule_id for one in proposing.get(change.setting, [])))
    passed = [one for one in passed if one.setting not in wanted]  # the recommendation measured it in context
    fewer = _fewer_workers(facts, judged)
    if fewer is not None:
        wanted[fewer.setting] = fewer
    current = PredictorConfig.of_service(facts)
    moving = [one for one in wanted.values() if not _runs_already(current, one)]
    return Plan(sorted(moving, key=_table_order), passed)


def _runs_already(current: PredictorConfig, wanted: Wanted) -> bool:
    """Whether the service already runs the value (Paddle's default where it says none: one thread)."""
    fields = [field.name for field in PREDICTOR_FIELDS if setting_of(field.name) == wanted.setting]
    return bool(fields) and wanted.was is None and getattr(current, fields[0]) == wanted.value


def _fewer_workers(facts: Facts, judged: list[Judged]) -> Wanted | None:
    """Where the launcher's workers alone, at one thread each, are more than the CPU budget (PD-CPU-010 failing):
    as many workers as whole CPUs, in the launcher's terms. Unsafe: fewer workers serve fewer requests at once."""
    over = next((one for one in judged if one.rule_id == OVER_BUDGET and one.status == Status.FAIL), None)
    origin = next((one for one in facts.service_origins if one.name == "instances"), None)
    budget = cpu_budget(facts)
    if over is None or origin is None or origin.origin != Origin.LAUNCHER or budget is None:
        return None
    workers = facts.service.instances
    if workers <= budget.whole_cpus:
        return None
    return Wanted("instances", budget.whole_cpus, workers, OVER_BUDGET, FixSafety.UNSAFE,
                  f"not measured: {workers} workers of one thread each need {workers} CPUs, the budget is {budget.describe()}",
                  term="workers")


def _recommended(recommendation: Recommendation, rulebook: Rulebook, proposing: dict[str, list[Judged]]) -> list[Wanted]:
    """Each setting the recommended configuration moves from the one it was measured against, as safe as the
    rule of the finding that proposes it (else every rule measuring it)."""
    start, end = recommendation.baseline.config, recommendation.config
    comparison = recommendation.comparison
    drifted = comparison is not None and bool(comparison.changes_outputs)
    whole = (f"the recommended {end.label(start)} measured {gain_words(comparison)} as a whole" if comparison is not None
             else "part of the recommended configuration, not measured as a whole")
    changes = []
    for field in PREDICTOR_FIELDS:
        before, after = getattr(start, field.name), getattr(end, field.name)
        if before == after:
            continue
        setting = setting_of(field.name)
        rules = [one.rule for one in proposing.get(setting, []) if one.rule is not None]
        safety = rules[0].fix_safety if rules else _experiment_safety(rulebook, EXPERIMENT_OF.get(field.name, field.name))
        changes.append(Wanted(setting, after, before, RECOMMENDING_RULE, FixSafety.UNSAFE if drifted else safety, whole))
    return changes


def _experiment_safety(rulebook: Rulebook, experiment: str) -> FixSafety:
    """Safe only where every rule whose experiment measures the setting says its fix is safe."""
    words = {rule.fix_safety for rule in rulebook.rules.values() if rule.experiment == experiment}
    return FixSafety.SAFE if words == {FixSafety.SAFE} else FixSafety.UNSAFE


def _own_comparison(facts: Facts, one: Judged) -> ComparisonResult | None:
    """The comparison of the candidate the finding's verdict rests on, in its rule's experiment."""
    if facts.verification is None or one.rule is None or one.rule.experiment is None or one.finding.measured is None:
        return None
    result = facts.verification.experiment(one.rule.experiment)
    if result is None:
        return None
    return next((comparison for comparison in result.comparisons if comparison.candidate == one.finding.measured), None)


def _not_measured(facts: Facts, one: Judged) -> str:
    """Why a finding's fix has no measurement of its own, in words."""
    if facts.verification is None:
        return "--model or --measure measures it"
    result = facts.verification.experiment(one.rule.experiment) if one.rule is not None and one.rule.experiment else None
    if result is None:
        return "no experiment measures this fix" if one.rule is None or one.rule.experiment is None else \
            facts.verification.error or f"its experiment ({one.rule.experiment}) did not run"
    return result.reason or f"its experiment ({result.name}) measured no candidate with this value"


def _declared(facts: Facts, setting: str) -> Any:
    """What the service says of ``setting`` now (None: nothing does)."""
    if "." in setting:
        group, name = setting.split(".", 1)
        return getattr(getattr(facts.service, group), name)
    return getattr(facts.service, setting)


def _predictors(one: Judged) -> tuple[int, ...]:
    named = one.finding.evidence.get("predictors") if hasattr(one.finding.evidence, "get") else None
    return tuple(named) if isinstance(named, list) else ()


def _table_order(wanted: Wanted) -> int:
    return next(index for index, row in enumerate(KNOBS) if row.name == wanted.setting)
