"""A check of the service's settings judges every predictor the service recorded (``paddle-doctor
record``): it runs once on the facts as each predictor sees them (its recorded settings where the record
decides: no flag or --config says otherwise; with ``--measure``, its own model, measurement and graph),
and its findings are folded into one per rule, the worst, naming the predictors it is about and where
each was built. A check of the model's graph judges each predictor whose graph ``--measure`` read."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..base.vocabulary import Device, Status
from ..facts import Facts, SettingOrigin
from .findings import Finding, ForPredictors

if TYPE_CHECKING:  # a record is read only where a service recorded one, never by the healthcheck
    from ..facts.recorded import RecordedPredictor
    from ..facts.service_record import ServiceRecord
    from ..facts.verification import VerificationFacts

Judge = Callable[[Facts], list[Finding]]
# a rule that holds for some predictors and does not apply to the others (no TensorRT, not measured) passes, naming those
WORST_FIRST = (Status.FAIL, Status.WARN, Status.ERROR, Status.PASS, Status.SKIP)


def named(predictors: list[RecordedPredictor]) -> str:
    """``det, rec (rapidocr 1.4.5 utils/infer_engine.py:52); cls (/app/app.py:9)``: the predictors, by where they were built."""
    by_site: dict[str, list[str]] = {}
    for predictor in predictors:
        by_site.setdefault(predictor.built_at(), []).append(predictor.name())
    return "; ".join(f"{', '.join(dict.fromkeys(names))} ({site})" for site, names in by_site.items())


def judged_predictors(facts: Facts) -> list[tuple[RecordedPredictor, Facts]]:
    """Each recorded predictor whose configuration is known, busiest first, with the facts as it sees
    them (the one resolution's view of it, ``service.resolve.predictor_view``); empty when the service's
    record was not read."""
    record = facts.service_record
    if record is None or not record.read:
        return []
    from ..service.record import predictor_settings
    from ..service.resolve import predictor_view

    views = []
    for predictor in sorted((p for p in record.predictors if p.config is not None), key=lambda p: -p.runs.runs):
        own, measured = _own_measurement(record, predictor)
        service, origins = predictor_view(facts.service, facts.service_origins, predictor_settings(record, predictor) + own)
        views.append((predictor, replace(facts, service=service, service_origins=origins, **measured)))
    return views


def _own_measurement(record: ServiceRecord, predictor: RecordedPredictor) -> tuple[list[SettingOrigin], dict[str, Any]]:
    """With ``--measure``, a predictor's own model, as a recorded setting (the first's says it was measured first),
    and, for one other than the one measured first, the measurement and graph it is judged by (None where it was
    not measured). Nothing otherwise: the facts hold --model's."""
    first = record.measured_first()
    plan = next((plan for plan in record.measured if plan.predictor == predictor.id), None)
    if first is None:
        return [], {}
    from ..service.record import model_origin

    model = [model_origin(record, plan, plan is first)] if plan else []
    return model, {} if plan is first else {"verification": plan.verification if plan else None, "graph": plan.graph if plan else None}


def measurement_for(facts: Facts, finding: Finding) -> VerificationFacts | None:
    """The measurement a finding is judged against: the report's, unless ``--measure`` measured the
    recorded predictors one by one and the finding names only predictors other than the one measured
    first; then the measurement of the first of those it names that was measured (None where none was:
    another predictor's measurement never confirms or refutes it)."""
    record = facts.service_record
    first = record.measured_first() if record is not None else None
    named = finding.evidence.predictors if isinstance(finding.evidence, ForPredictors) else None
    if record is None or first is None or not named or first.predictor in named:
        return facts.verification
    return next((plan.verification for plan in record.measured if plan.predictor in named and plan.verification is not None), None)


def each_predictor(judge: Judge, on: Device | None = None) -> Judge:
    """``judge`` run for every recorded predictor (``on`` a device: every one that runs there); without a
    record, once on the facts as they are."""
    if on is None:
        return _folding(judge, judged_predictors)
    return _folding(judge, lambda facts: [(predictor, view) for predictor, view in judged_predictors(facts) if view.service.device == on])


def each_model(judge: Judge) -> Judge:
    """A check of the model's graph run for every recorded predictor whose graph ``--measure`` read (each
    model under its predictor's configuration); without --measure (--model's graph), once on the facts."""
    return _folding(judge, lambda facts: [(predictor, view) for predictor, view in judged_predictors(facts)
                                          if view.graph is not None] if _measured(facts) else [])


def _measured(facts: Facts) -> bool:
    return facts.service_record is not None and facts.service_record.measured_first() is not None


def _folding(judge: Judge, views_of: Callable[[Facts], list[tuple[RecordedPredictor, Facts]]]) -> Judge:
    @functools.wraps(judge)
    def run(facts: Facts) -> list[Finding]:
        views = views_of(facts)
        if not views:
            return judge(facts)
        judged = [(predictor, finding) for predictor, view in views for finding in judge(view)]
        rules = list(dict.fromkeys(finding.rule_id for _, finding in judged))
        return [_folded([(p, f) for p, f in judged if f.rule_id == rule]) for rule in rules]

    return run


def _folded(judged: list[tuple[RecordedPredictor, Finding]]) -> Finding:
    """The worst of one rule's findings, naming every predictor it holds for and the lines behind them."""
    worst = min(judged, key=lambda item: WORST_FIRST.index(item[1].status))[1]
    alike = [(predictor, finding) for predictor, finding in judged if finding.status == worst.status]
    predictors = [predictor for predictor, _ in alike]
    locations: list = []
    for location in (location for _, finding in alike for location in finding.locations):
        locations += [location] if location not in locations else []
    return replace(worst, message=f"{named(predictors)}: {worst.message}", locations=locations,
                   evidence=ForPredictors(worst.evidence, [predictor.id for predictor in predictors]))
