"""Known problems (known_issues.yaml) on the real predictor. A crash or a wrong result an entry predicts
for the service's configuration on this model is tried in the worker: the load of that configuration,
which verification makes anyway, shows whether it happens (Paddle's message holds the entry's text, or
the worker was killed), and the entry's workaround is then measured in a worker of its own (a crash
there never takes the doctor down). A configuration an experiment or the recommendation would measure
is left out where an entry predicts it fails (``KnownProblems.harmful``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..base.children import Interrupted
from ..facts import Facts
from ..facts.predictor import PredictorConfig
from ..facts.verification import KnownIssueTrial, ModelLoadFailure
from ..judge.known_issues import BROKEN, KnownIssue, Setup, active_book, matches, model_of_program
from .deadline import BudgetExceeded, Deadline
from .measure import Measurer
from .session import WorkerDied, WorkerError, WorkerSession

if TYPE_CHECKING:
    from ..graph.program import Program

SAID_CHARS = 300  # the most of what the worker said that a trial keeps


@dataclass(frozen=True)
class KnownProblems:
    """The entries that break a predictor (crash, wrong result), matched against the facts, this model's
    program and the configuration each experiment would measure."""

    facts: Facts
    program: Program
    entries: tuple[KnownIssue, ...]

    def harmful(self, config: PredictorConfig) -> KnownIssue | None:
        """The first entry that predicts ``config`` fails on this model with this Paddle; None where none does."""
        setup = Setup(self.facts, config, model_of_program(self.program), None)
        return next((entry for entry in self.entries if matches(entry, setup).holds), None)

    def avoiding(self, candidates: list[PredictorConfig]) -> list[PredictorConfig]:
        """The candidates no entry predicts to fail: what the recommendation may measure and offer."""
        return [candidate for candidate in candidates if self.harmful(candidate) is None]

    def why_not(self, config: PredictorConfig, relative_to: PredictorConfig, what: str | None = None) -> tuple[str, str] | None:
        """Why ``config`` is not measured (the entry's id and the words), where an entry predicts it fails;
        ``what``: the configuration in words (by default, how it differs from ``relative_to``)."""
        entry = self.harmful(config)
        if entry is None:
            return None
        return entry.id, (f"not measured: {what or config.label(relative_to)} would hit {entry.id}, {entry.title} "
                          f"({entry.fixed()}; see {entry.threads()})")


def known_problems(facts: Facts, program: Program) -> KnownProblems:
    return KnownProblems(facts, program, tuple(entry for entry in active_book().entries if entry.kind in BROKEN))


def avoiding_known(known: KnownProblems | None, candidates: list[PredictorConfig]) -> list[PredictorConfig]:
    """The recommendation's candidates without those a known problem makes fail (all of them where nothing is known)."""
    return known.avoiding(candidates) if known is not None else candidates


def try_known_issues(known: KnownProblems, baseline: PredictorConfig, failure: ModelLoadFailure | None,
                     new_session: Callable[[], WorkerSession], min_effect: float, deadline: Deadline) -> list[KnownIssueTrial]:
    """Each entry predicted for the service's configuration, as its load in the worker showed it (``failure``:
    None where it created a predictor and ran the model), its workaround measured where it was reproduced."""
    trials: list[KnownIssueTrial] = []
    for entry in known.entries:
        if not _predicts(known, entry, baseline):
            continue
        trial = recognised(entry, baseline, failure)
        workaround = workaround_config(entry, baseline)
        if trial.reproduced and workaround is not None:
            try:
                trial = measured_workaround(trial, baseline, workaround, new_session, min_effect, deadline)
            except Interrupted as exc:  # what was tried stays; the run stops as it does at any other step
                trials.append(replace(trial, workaround=workaround.label(baseline), workaround_ran=False,
                                      workaround_error=f"interrupted by {exc.signal_name}"))
                break
        trials.append(trial)
    return trials


def _predicts(known: KnownProblems, entry: KnownIssue, config: PredictorConfig) -> bool:
    return bool(matches(entry, Setup(known.facts, config, model_of_program(known.program), None)).holds)


def recognised(entry: KnownIssue, baseline: PredictorConfig, failure: ModelLoadFailure | None) -> KnownIssueTrial:
    """The trial as the load of ``baseline`` shows it: reproduced where it failed with the entry's message
    (killed, for an entry that names none)."""
    label = baseline.label()
    if failure is None:
        return KnownIssueTrial(entry.id, label, False, "the service's configuration created a predictor and ran the model")
    said = failure.message.rsplit(": ", 1)[-1] if entry.error is None else _around(failure.message, entry.error)
    reproduced = entry.error in failure.message if entry.error is not None else failure.signal is not None
    if not reproduced:
        said = f"it failed otherwise: {failure.message[-SAID_CHARS:]}"
    return KnownIssueTrial(entry.id, label, reproduced, said[:SAID_CHARS], failure.signal)


def _around(message: str, text: str) -> str:
    """The part of Paddle's message from the entry's text on, where it holds it."""
    start = message.find(text)
    return message[start:] if start >= 0 else message


def workaround_config(entry: KnownIssue, baseline: PredictorConfig) -> PredictorConfig | None:
    """The service's configuration with the settings the entry's workaround changes; None where it names none."""
    if not entry.workaround.measure:
        return None
    changes: dict[str, Any] = dict(entry.workaround.measure)  # each a bool setting of the configuration (MEASURED_SETTINGS)
    return replace(baseline, **changes)


def measured_workaround(trial: KnownIssueTrial, baseline: PredictorConfig, workaround: PredictorConfig,
                        new_session: Callable[[], WorkerSession], min_effect: float, deadline: Deadline) -> KnownIssueTrial:
    """The trial with its workaround loaded and run in a fresh worker: its first run and its warm run, or why it did not run."""
    label = workaround.label(baseline)
    session = None
    try:
        session = new_session()
        warmed = Measurer(session, min_effect, deadline=deadline).load(workaround)
        return replace(trial, workaround=label, workaround_ran=True, workaround_first_ms=round(warmed.first_ms, 3),
                       workaround_warm_ms=round(warmed.warm_ms, 3))
    except (WorkerError, WorkerDied, BudgetExceeded) as exc:
        return replace(trial, workaround=label, workaround_ran=False, workaround_error=str(exc)[-SAID_CHARS:])
    finally:
        if session is not None:
            session.close()
