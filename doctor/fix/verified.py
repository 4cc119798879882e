"""``fix --write --verify``: the service's configuration read again from the patched files, and raced against
the one it had on the model, with the statistics of every experiment; its gain set beside the one the report
predicted for the recommendation."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base.vocabulary import ProcessStatus
from ..facts import Facts
from ..facts.knobs import PREDICTOR_FIELDS, setting_of
from ..facts.predictor import PredictorConfig
from ..facts.verification import ComparisonResult
from .places import Placed
from .plan import Wanted, gain_words

if TYPE_CHECKING:
    from ..pipeline import ProbeOptions, Reporter


@dataclass(frozen=True)
class Verified:
    """What the patched files give (``before`` → ``after``), its measurement (None: not measured, ``why`` says
    why) and the recommendation's, where the report measured one."""

    before: PredictorConfig
    after: PredictorConfig
    comparison: ComparisonResult | None
    recommended: PredictorConfig | None
    predicted: ComparisonResult | None
    why: str | None = None
    read_again: bool = True  # ``after`` read from the patched files; else the measured one with the settings written
    unseen: str | None = None  # the settings written that reading the patched files again does not give

    @property
    def as_predicted(self) -> bool | None:
        """Whether the gain measured lies within the interval the report predicted for the recommendation; None
        where the patched files do not give the whole recommendation, or nothing was measured."""
        if self.comparison is None or self.predicted is None or self.after != self.recommended:
            return None
        return self.predicted.ci_low <= self.comparison.ratio <= self.predicted.ci_high

    def lines(self, live: bool) -> list[str]:
        warned = [f"warning: the patched files, read again, do not give {self.unseen} as written; check the diff"] \
            if self.unseen else []
        if self.comparison is None:
            return [*warned, f"not verified: {self.why}"]
        given = "give" if self.read_again else "set, as the service reads them when it starts,"
        said = [(f"the patched files {given} {self.after.label(self.before)}; against the original it measured "
                 f"{gain_words(self.comparison)}: {self.comparison.verdict}")]
        if self.predicted is not None and self.as_predicted is not None:
            said.append(f"the report predicted {gain_words(self.predicted)} for the recommendation; the gain measured is "
                        f"{'within' if self.as_predicted else 'outside'} that interval")
        elif self.predicted is not None and self.recommended is not None:
            said.append(f"the fixes applied are part of the recommendation ({self.recommended.label(self.before)}, predicted "
                        f"{gain_words(self.predicted)}): the rest was not applied (unsafe, refused or left out; see above)")
        if live:
            said.append("restart the service, then run paddle-doctor --measure to confirm it on its real traffic")
        return [*warned, *said]


def verify_written(before: Facts, probe: ProbeOptions, reporter: Reporter, written: list[Placed]) -> list[str]:
    """The lines that say how the patched configuration measured; ``before``: the facts the fix was planned on,
    ``written``: the changes written."""
    verified = measure_patched(before, probe, reporter, written)
    return verified.lines(before.service_process.status == ProcessStatus.PROBED)


def measure_patched(before: Facts, probe: ProbeOptions, reporter: Reporter, written: list[Placed]) -> Verified:
    """The configuration the patched files give, read again as the doctor reads the service, raced against the one
    it had. Where what the doctor reads of the service does not change with the files, it is the configuration
    measured with the settings written: a running service's record is of the process as it started; a wrapper's
    YAML (a file that is neither Python nor the --config) is the wrapper's to read."""
    from ..pipeline import chosen_interpreter, collect, measuring_budget
    from ..probes.context import ProbeContext
    from ..verify.model import ModelRun, flagged_run
    from ..verify.run import VerifyOptions, race_configs

    measured = before.verification
    old = measured.baseline if measured is not None and measured.baseline is not None else PredictorConfig.of_service(before)
    expected = with_written(old, [one.wanted for one in written])
    recommendation = measured.recommendation if measured is not None else None
    predicted = recommendation.comparison if recommendation is not None else None
    recommended = recommendation.config if recommendation is not None else None
    recorded = before.service_record is not None and before.service_record.read
    unread = all(not path.endswith(".py") and os.path.abspath(path) != os.path.abspath(probe.service.config or "")
                 for one in written for path, _ in one.edits)
    new, read_again, unseen = expected, False, None
    if not recorded:
        again = PredictorConfig.of_service(collect(probe, reporter, measure=False))
        if again != old or not unread:
            new, read_again = again, True
            unseen = expected.label(again) if expected != again else None
    run = flagged_run(probe.service) or (ModelRun(measured.model.path) if measured is not None else None)
    if run is None:
        return Verified(old, new, None, recommended, predicted, "no model was given (--model, or --measure with a record)")
    interpreter, refused = chosen_interpreter(probe, ProbeContext(probe.root), before.service_process)
    if refused:
        return Verified(old, new, None, recommended, predicted, refused)
    first = before.service_record.measured_first() if before.service_record is not None else None
    shapes = list(probe.shapes) or (list(first.shapes) if first is not None else [])
    budget = measuring_budget(probe, None)
    options = VerifyOptions(shapes=shapes, inputs=probe.inputs, budget_s=budget, min_effect=probe.min_effect,
                            max_drift=probe.max_drift)
    with reporter.measuring(budget) as progress:
        result = race_configs(before, run, old, new, options, progress, interpreter)
    if not result.measured or not result.comparisons:
        return Verified(old, new, None, recommended, predicted, result.reason or "the race measured nothing")
    return Verified(old, new, result.comparisons[0], recommended, predicted, read_again=read_again, unseen=unseen)


def with_written(config: PredictorConfig, written: list[Wanted]) -> PredictorConfig:
    """``config`` with each setting written that a CPU predictor runs."""
    fields = {field.name: field for field in PREDICTOR_FIELDS}
    changes = {field: wanted.value for wanted in written for field in fields if setting_of(field) == wanted.setting}
    return config.vary(**changes) if changes else config
