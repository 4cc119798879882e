"""``fix --write --verify``: the service's configuration read again from the patched files, and raced against
the one it had on the model, with the statistics of every experiment; its gain set beside the one the report
predicted for the recommendation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base.vocabulary import ProcessStatus
from ..facts import Facts
from ..facts.predictor import PredictorConfig
from ..facts.verification import ComparisonResult
from .plan import effect_words

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

    @property
    def as_predicted(self) -> bool | None:
        """Whether the gain measured lies within the interval the report predicted for the recommendation; None
        where the patched files do not give the whole recommendation, or nothing was measured."""
        if self.comparison is None or self.predicted is None or self.after != self.recommended:
            return None
        return self.predicted.ci_low <= self.comparison.ratio <= self.predicted.ci_high

    def lines(self, live: bool) -> list[str]:
        if self.comparison is None:
            return [f"not verified: {self.why}"]
        said = [(f"the patched files give {self.after.label(self.before)}; against the original it measured "
                 f"{effect_words(self.comparison)}: {self.comparison.verdict}")]
        if self.predicted is not None and self.as_predicted is not None:
            said.append(f"the report predicted {effect_words(self.predicted)} for the recommendation; the gain measured is "
                        f"{'within' if self.as_predicted else 'outside'} that interval")
        elif self.predicted is not None and self.recommended is not None:
            said.append(f"the fixes applied are part of the recommendation ({self.recommended.label(self.before)}, predicted "
                        f"{effect_words(self.predicted)}); --unsafe-fixes applies the rest")
        if live:
            said.append("restart the service, then run paddle-doctor --measure to confirm it on its real traffic")
        return said


def verify_written(before: Facts, probe: ProbeOptions, reporter: Reporter) -> list[str]:
    """The lines that say how the patched configuration measured; ``before``: the facts the fix was planned on."""
    verified = measure_patched(before, probe, reporter)
    return verified.lines(before.service_process.status == ProcessStatus.PROBED)


def measure_patched(before: Facts, probe: ProbeOptions, reporter: Reporter) -> Verified:
    from ..pipeline import chosen_interpreter, collect, measuring_budget
    from ..probes.context import ProbeContext
    from ..verify.model import flagged_run
    from ..verify.run import VerifyOptions, race_configs

    patched = collect(probe, reporter, measure=False)
    old, new = PredictorConfig.of_service(before), PredictorConfig.of_service(patched)
    recommendation = before.verification.recommendation if before.verification is not None else None
    predicted = recommendation.comparison if recommendation is not None else None
    recommended = recommendation.config if recommendation is not None else None
    if old == new:
        return Verified(old, new, None, recommended, predicted,
                        f"the patched files give the configuration the service had ({old.label()})")
    run = flagged_run(probe.service)
    if run is None:
        return Verified(old, new, None, recommended, predicted, "no model was given (--model)")
    interpreter, refused = chosen_interpreter(probe, ProbeContext(probe.root), before.service_process)
    if refused:
        return Verified(old, new, None, recommended, predicted, refused)
    budget = measuring_budget(probe, None)
    options = VerifyOptions(shapes=list(probe.shapes), inputs=probe.inputs, budget_s=budget, min_effect=probe.min_effect,
                            max_drift=probe.max_drift)
    with reporter.measuring(budget) as progress:
        result = race_configs(before, run, old, new, options, progress, interpreter)
    if not result.measured or not result.comparisons:
        return Verified(old, new, None, recommended, predicted, result.reason or "the race measured nothing")
    return Verified(old, new, result.comparisons[0], recommended, predicted)
