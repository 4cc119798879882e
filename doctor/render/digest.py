"""What a person reads first, built once from the Report for the text, Markdown and HTML reports:
the verdict, the problems ranked by what fixing them measured, the recommended configuration and
the model's inputs as measured."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base.quoting import shell_word
from ..base.vocabulary import Effect, Status, Verdict
from ..base.words import first_clause
from ..judge.offered import kept
from ..judge.verdict_words import describe, noise_words
from ..judge.wrapper_fix import WrapperSnippet, recommended_in_wrapper_terms
from ..report.report import Report, ReportFinding

if TYPE_CHECKING:
    from ..facts.verification import ComparisonResult, ExperimentResult, MachineNoise, ModelFacts, ModelInput, Recommendation
    from ..report.measured import RecommendationSummary

TOP_PROBLEMS = 5
STATUS_LABEL = {Status.FAIL: "✗ FAIL", Status.WARN: "! WARN", Status.ERROR: "? ERROR", Status.PASS: "✓ pass", Status.SKIP: "- skip"}
ENFORCED_WHY = "moved there whatever the measurement said"


@dataclass
class Problem:
    """A finding that needs attention, with what the measurement of its fix said (``gain``: speed
    ratio of the fixed configuration over the service's; None when nothing was measured faster)."""

    finding: ReportFinding
    gain: float | None
    headline: str


@dataclass
class ShapeLatency:
    """One measured set of input shapes, with the p50 of each arm measured on it."""

    shapes: str
    p50_ms: dict[str, float | None]


@dataclass
class InputView:
    """One model input: dtype, declared shape (``?`` marks a dynamic dimension), the shapes fed and why."""

    name: str
    dtype: str
    declared: str
    shapes: list[str]
    chosen_by: str
    how_to_change: str


@dataclass
class RecommendationView:
    """The recommendation as the summary shows it, with how busy the machine was while it was measured."""

    title: str
    headline: str
    snippet: str | None  # None when the service's configuration is kept
    steps: list[str]
    enforced: list[str]
    noise: str | None = None
    wrapper: WrapperSnippet | None = None  # the same in the settings of the wrapper that builds the predictors


@dataclass
class Digest:
    verdict: str
    problems: list[Problem]
    recommendation: RecommendationView | None
    inputs: list[InputView]
    shape_latencies: list[ShapeLatency]

    @property
    def top(self) -> list[Problem]:
        return self.problems[:TOP_PROBLEMS]

    @property
    def recommendation_measured_above(self) -> bool:
        """A problem shown above the recommendation (PD-CFG-001's) states its measurement as a whole already."""
        return any(problem.finding.recommendation is not None and problem.finding.recommendation.comparison is not None
                   for problem in self.top)


def digest(report: Report) -> Digest:
    problems = [_problem(f) for f in report.findings if f.status.is_problem]
    problems.sort(key=lambda p: (p.gain is None, -(p.gain or 0.0), -p.finding.severity.rank, p.finding.rule_id))
    verification = report.verification
    recommendation = verification.recommendation if verification else None
    model = verification.model if verification else None
    inputs = [_input_view(item) for item in model.inputs.values()] if model else []
    view = (_recommendation_view(recommendation, verification.noise, verification.min_effect,
                                recommended_in_wrapper_terms(recommendation.config, report.service.predictors if report.service else []))
            if verification and recommendation else None)
    return Digest(verdict_line(report), problems, view, inputs, shape_latencies(model, recommendation) if model and recommendation else [])


def verdict_line(report: Report) -> str:
    counts = report.summary.counts
    words = [f"{counts.get(key, 0)} {name}" for key, name in
             ((Status.FAIL, "failed"), (Status.WARN, "warnings"), (Status.ERROR, "errors"), (Status.PASS, "passed"), (Status.SKIP, "skipped"))]
    ignored = f"; ignored {', '.join(report.summary.ignored)}" if report.summary.ignored else ""
    verdict = "problems" if report.exit_code else "nothing"
    return f"{', '.join(words)}{ignored} — {verdict} at or above '{report.fail_on}' (exit {report.exit_code})"


def best_comparison(finding: ReportFinding) -> ComparisonResult | None:
    """The comparison a finding's story rests on: the recommendation's, else the one of its experiment
    that its verdict was decided by (the change its fix proposes); None for any other finding."""
    if finding.recommendation:
        return finding.recommendation.comparison
    experiment = finding.experiment_result
    if experiment is None or not experiment.measured or finding.measured is None:
        return None
    return next((c for c in experiment.comparisons if c.candidate == finding.measured), None)


VERDICT_WORDS = {Verdict.CONFIRMED: "confirmed", Verdict.UNDECIDED: "raise --budget or measure on a quieter machine"}


def _problem(finding: ReportFinding) -> Problem:
    comparison = best_comparison(finding)
    if comparison is None:
        experiment = finding.experiment_result
        if experiment is not None and experiment.measured:  # measured, but not the change this finding proposes
            return Problem(finding, None, f"{finding.title}: {first_clause(finding.message)}")
        reason = "not measured" if not finding.experiment else f"not measured (experiment '{finding.experiment}')"
        return Problem(finding, None, f"{finding.title}: {reason}")
    gain = comparison.ratio if comparison.verdict == Effect.IMPROVED and not comparison.changes_outputs else None
    return Problem(finding, gain, f"{finding.title}: measured {describe(comparison)}{_verdict_words(finding)}")


def _verdict_words(finding: ReportFinding) -> str:
    if finding.verdict == Verdict.REFUTED:  # a refuted finding that still fails is a limit the doctor enforces
        return " — refuted, and the limit stays enforced"
    return f" — {VERDICT_WORDS[finding.verdict]}" if finding.verdict in VERDICT_WORDS else ""


def _recommendation_view(recommendation: RecommendationSummary, noise: MachineNoise | None, min_effect: float,
                         wrapper: WrapperSnippet | None) -> RecommendationView:
    """The service's own configuration, kept, is not shown as code to paste: there is nothing to change."""
    change = not kept(recommendation)
    return RecommendationView(recommendation.title, recommendation.headline, recommendation.snippet if change else None,
                              recommendation.steps, recommendation.enforced, noise_words(noise, min_effect) if noise else None,
                              wrapper if change else None)


def dims(shape: list[int]) -> str:
    return "x".join("?" if dim == -1 else str(dim) for dim in shape) or "scalar"


def _input_view(item: ModelInput) -> InputView:
    declared = dims(item.declared)
    dynamic = [str(axis) for axis in item.dynamic_axes]
    if dynamic:
        declared += f" (dynamic: dim {', '.join(dynamic)})"
    shapes = [dims(shape) for shape in item.shapes]
    how = f"--shape {shell_word(item.name)}:DIMS (once per shape) or --inputs FILE.npz|FOLDER"
    return InputView(item.name, item.dtype, declared, shapes, item.chosen_by, how)


def shape_latencies(model: ModelFacts, recommendation: Recommendation) -> list[ShapeLatency]:
    """With several samples: each sample's shapes with the p50 the baseline and the recommendation
    measured on it (``sample_p50[i]`` belongs to ``shapes[i]`` of every input)."""
    arms = {arm.label: arm for arm in (recommendation.baseline, recommendation.recommended)}
    count = max((len(arm.sample_p50 or []) for arm in arms.values()), default=0)
    if count < 2:
        return []
    rows = []
    for index in range(count):
        shapes = ", ".join(f"{name} {dims(item.shapes[index])}" for name, item in model.inputs.items()
                           if index < len(item.shapes))
        rows.append(ShapeLatency(shapes, {label: (arm.sample_p50 or [None] * count)[index] for label, arm in arms.items()}))
    return rows


def measured_experiments(report: Report) -> list[ExperimentResult]:
    """Every experiment that measured something, once each, in the order the findings name them."""
    found: dict[str, ExperimentResult] = {}
    for finding in report.findings:
        experiment = finding.experiment_result
        if experiment and experiment.measured:
            found.setdefault(experiment.name, experiment)
    return list(found.values())


def collapsed_areas(report: Report) -> list[tuple[str, dict[Status, list[str]]]]:
    """Each area's title with the rule ids that passed and were skipped there."""
    areas = []
    for area in dict.fromkeys(f.area for f in report.findings):
        ids = {status: [f.rule_id for f in report.findings if f.area == area and f.status == status] for status in (Status.PASS, Status.SKIP)}
        if any(ids.values()):
            areas.append((report.areas.get(area, area), ids))
    return areas


PROBLEM_COLUMNS = ("status", "rule", "severity", "verdict", "what fixing it measured")
INPUT_COLUMNS = ("input", "dtype", "declared (? dynamic)", "measured", "chosen by", "change with")


Table = tuple[str, tuple[str, ...], list[tuple[str, ...]]]  # title, columns, rows


def problem_table(summary: Digest) -> Table:
    return ("Problems, ranked by measured gain", PROBLEM_COLUMNS,
            [(STATUS_LABEL[p.finding.status], p.finding.rule_id, p.finding.severity, p.finding.verdict or "-", p.headline)
             for p in summary.problems])


def input_tables(summary: Digest) -> list[Table]:
    """The model's inputs and, with several samples, the p50 on each; empty tables left out."""
    inputs: list[tuple[str, ...]] = [(v.name, v.dtype, v.declared, ", ".join(v.shapes), v.chosen_by, v.how_to_change) for v in summary.inputs]
    labels = list(summary.shape_latencies[0].p50_ms) if summary.shape_latencies else []
    shapes = [(row.shapes, *("-" if row.p50_ms[label] is None else f"{row.p50_ms[label]:.2f}" for label in labels))
              for row in summary.shape_latencies]
    found: list[Table] = [("Model inputs", INPUT_COLUMNS, inputs),
             ("p50 per measured shape (the recommendation's p50 is over the mix)", ("shapes", *(f"{label} p50 ms" for label in labels)), shapes)]
    return [table for table in found if table[2]]
