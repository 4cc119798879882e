"""The recommendation as a whole: changes adopted one at a time are offered only when, together, they
measure decisively faster than the start they grew from (the service's configuration, or it within
the CPU budget); a recommendation that only keeps PD-CPU-010, measured slower, is shown as enforced,
never as faster, in every format and in PD-CFG-001; the service's configuration, kept, is not shown
as code to paste.

The decision runs over a stand-in measurer whose races answer what the test says they measured; the
rendering runs the real CLI on facts holding such a recommendation; one live run (slow) measures the
model zoo's text recogniser with the real predictor."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest
from conftest import facts_from_root, report_json, run_doctor
from factories import make_facts
from paddle_doctor.base.vocabulary import Effect
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.verification import (
    ArmResult,
    ComparisonResult,
    ExperimentResult,
    ModelFacts,
    Recommendation,
    VerificationFacts,
)
from paddle_doctor.judge.verdict_words import describe, effect_words
from paddle_doctor.verify.deadline import Deadline
from paddle_doctor.verify.experiments import Context
from paddle_doctor.verify.recommend import recommend

SERVICE = PredictorConfig(threads=8, onednn=True)
START = SERVICE.vary(threads=2)  # within the 2 CPUs of the facts below: PD-CPU-010's fix
SLOWER = dict(ratio=1 / 1.16, ci_low=1 / 1.25, ci_high=1 / 1.08, verdict=Effect.REGRESSED)
FASTER = dict(ratio=1.5, ci_low=1.3, ci_high=1.7, verdict=Effect.IMPROVED)
WITHIN = SERVICE.vary(threads=1)  # within the 1.5-CPU quota of the recorded root the reports are rendered for
UNDECIDED = dict(ratio=1 / 1.01, ci_low=1 / 1.10, ci_high=1.05, verdict=Effect.UNDECIDED)


def measured(baseline: str, candidate: str, effect: dict) -> ComparisonResult:
    return ComparisonResult(baseline, candidate, rounds=12, baseline_p50=10.0, candidate_p50=10.0 / effect["ratio"], **effect)


class StandInMeasurer:
    """Answers each race with what ``effects`` says the candidate measured against the race's baseline
    (by configuration), and records the races run."""

    def __init__(self, effects: dict[tuple[PredictorConfig, PredictorConfig], dict]):
        self.effects = effects
        self.raced: list[tuple[PredictorConfig, PredictorConfig]] = []
        self.min_effect = 0.03
        self.deadline = Deadline(40)

    def race(self, baseline, candidates, budget_s, what, extend_s=0.0, settle_by=None):
        found = []
        for label, config in candidates:
            self.raced.append((baseline[1], config))
            found.append(measured(baseline[0], label, self.effects[baseline[1], config]))
        return found

    def arm_result(self, label, config):
        return ArmResult(label, config, runs=48, p50=10.0)


def switch_measured_at(start: PredictorConfig, effect: dict) -> ExperimentResult:
    """The feed/fetch experiment, measured at ``start`` (where the search takes its measurement as it is)."""
    on = start.vary(feed_fetch=True)
    return ExperimentResult("feed_fetch", "measured", arms=[ArmResult("baseline", start), ArmResult("feed/fetch ops on", on)],
                            comparisons=[measured("baseline", "feed/fetch ops on", effect)])


def searched(threads: int, effects: dict) -> tuple[Recommendation, StandInMeasurer]:
    service = SERVICE.vary(threads=threads)
    facts = make_facts(quota=2, threads=threads, onednn=True)
    measurer = StandInMeasurer(effects)
    ctx = Context(facts, measurer=measurer, baseline=service, inputs={}, max_drift=0.01, new_session=None)
    start = service.vary(threads=min(threads, 2))
    found = recommend(ctx, {"feed_fetch": switch_measured_at(start, FASTER)}, 0.0, "m/inference.json", "m/inference.pdiparams")
    return found, measurer


def test_changes_slower_together_than_the_start_are_not_offered():
    """threads=2 (enforced), feed/fetch ops on (faster one at a time): together 1.16x slower than threads=2
    alone, so the recommendation is threads=2, measured against the service's configuration."""
    together = START.vary(feed_fetch=True)
    recommendation, measurer = searched(8, {(START, together): SLOWER, (SERVICE, START): SLOWER})
    assert recommendation.config == START and recommendation.enforced == ["PD-CPU-010"]
    assert "config.switch_use_feed_fetch_ops(False)" in recommendation.snippet
    assert measurer.raced == [(START, together), (SERVICE, START)]
    said = (f"threads=2, feed/fetch ops on measured together against threads=2 alone: {effect_words(measured('', '', SLOWER))}: "
            "the changes adopted one at a time are not offered")
    assert said in recommendation.steps, recommendation.steps
    assert "1.16x slower (95% CI 1.08-1.25x slower" in said
    assert recommendation.comparison.candidate == "recommended" and recommendation.comparison.verdict == Effect.REGRESSED


def test_changes_undecided_together_stay_and_say_the_whole_is_not_confirmed():
    """Within the budget already: feed/fetch ops on, adopted on a decisive measurement, is undecided together
    against the service's configuration. Undecided is not slower: the change stays, nothing more is raced,
    and the recommendation says it is not confirmed as a whole and which --budget would settle it."""
    service = SERVICE.vary(threads=2)
    together = service.vary(feed_fetch=True)
    recommendation, measurer = searched(2, {(service, together): UNDECIDED})
    assert recommendation.config == together and recommendation.enforced == []
    assert recommendation.comparison.verdict == Effect.UNDECIDED and recommendation.kept == []
    assert measurer.raced == [(service, together)]
    assert recommendation.steps[-1] == (f"feed/fetch ops on measured together against the service's configuration: "
                                        f"{effect_words(measured('', '', UNDECIDED))}: offered, each change measured faster where "
                                        "it was adopted, the whole not confirmed")
    assert recommendation.unconfirmed.startswith("not confirmed as a whole: recommended vs baseline: undecided (1.01x slower")
    assert recommendation.unconfirmed.endswith("; --budget 80 would settle it")  # twice the 40 s: its estimate is within noise


def test_changes_no_faster_together_than_the_start_are_not_offered():
    """No measurable difference together (the whole interval within --min-effect) is evidence against the
    changes, not the lack of it: they fall back, and each says so where it was confirmed."""
    service = SERVICE.vary(threads=2)
    together = service.vary(feed_fetch=True)
    none = dict(ratio=1.01, ci_low=0.995, ci_high=1.02, verdict=Effect.NO_EFFECT)
    recommendation, measurer = searched(2, {(service, together): none})
    assert recommendation.config == service and recommendation.comparison is None and recommendation.unconfirmed is None
    assert recommendation.steps[-1].endswith(": the changes adopted one at a time are not offered")
    assert recommendation.kept_because("feed_fetch") == recommendation.steps[-1]


def test_a_whole_cut_short_on_a_busy_machine_keeps_what_was_adopted():
    """The service (8 threads, feed/fetch ops off) within the budget at threads=2; feed/fetch ops on adopted
    at 1.5x. The machine is busy: the race together against threads=2 and the final one against the service
    end after two rounds each, their intervals reaching 1000x either way. The recommendation keeps the change,
    no number of those intervals is printed, and PD-CFG-001 is told the whole is not confirmed."""
    together = START.vary(feed_fetch=True)
    cut = dict(ratio=1.05, ci_low=1 / 3415.86, ci_high=3764.66, verdict=Effect.UNDECIDED)
    recommendation, measurer = searched(8, {(START, together): cut, (SERVICE, together): cut})
    assert recommendation.config == together and recommendation.enforced == ["PD-CPU-010"]
    assert measurer.raced == [(START, together), (SERVICE, together)]
    assert recommendation.unconfirmed is not None and "3415" not in recommendation.unconfirmed
    assert "not enough rounds (12)" in recommendation.unconfirmed and "would settle it" in recommendation.unconfirmed


@pytest.mark.parametrize("threads", [8, 2])
def test_changes_decisively_faster_together_are_offered(threads):
    service = SERVICE.vary(threads=threads)
    start = service.vary(threads=2)
    together = start.vary(feed_fetch=True)
    recommendation, measurer = searched(threads, {(start, together): FASTER, (service, together): FASTER})
    assert recommendation.config == together
    # the report's comparison is the whole against the service's configuration: the first race where the start is that
    assert measurer.raced == ([(start, together), (service, together)] if threads == 8 else [(service, together)])
    assert recommendation.comparison.verdict == Effect.IMPROVED and recommendation.steps[-1].endswith(": offered")


def facts_holding(config: PredictorConfig, comparison: ComparisonResult | None, enforced: list[str], steps: list[str]):
    recommendation = Recommendation(config, config.snippet("m/inference.json", "m/inference.pdiparams"), steps,
                                    ArmResult("baseline", SERVICE, runs=96, p50=10.0),
                                    ArmResult("recommended", config, runs=96, p50=11.6), comparison, enforced)
    verification = VerificationFacts(ModelFacts("m", "pir", "m/inference.json", "m/inference.pdiparams", {}), 20, 0.03, 0.01,
                                     baseline=SERVICE, recommendation=recommendation)
    return replace(facts_from_root("amd-avx512bf16-v2-quota", threads=8, onednn=True), verification=verification)


def every_format(tmp_path, facts) -> tuple[dict[str, str], dict]:
    """The report of ``facts`` as text, Markdown and HTML (its words only), and as JSON."""
    path = tmp_path / "facts.json"
    path.write_text(facts.to_json(), encoding="utf-8")
    page = run_doctor("--facts", str(path), "--format", "html").stdout
    documents = {"text": " ".join(run_doctor("--facts", str(path), "-v", env={"COLUMNS": "1000"}).stdout.split()),
                 "markdown": run_doctor("--facts", str(path), "--format", "markdown").stdout,
                 "html": " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())}
    return documents, report_json(run_doctor("--facts", str(path), "--json"))


def test_an_enforced_recommendation_measured_slower_is_shown_as_enforced_everywhere(tmp_path):
    whole = measured("baseline", "recommended", SLOWER)
    documents, report = every_format(tmp_path, facts_holding(WITHIN, whole, ["PD-CPU-010"], ["threads=1: the service's ..."]))
    title = "Recommended configuration: within the CPU budget (PD-CPU-010), not measured faster"
    headline = f"the recommendation keeps PD-CPU-010, which the service breaks, whatever it measured: {describe(whole)}"
    assert "1.16x slower (95% CI 1.08-1.25x slower" in headline
    for fmt, document in documents.items():
        assert title in document and headline in document, fmt
        assert "predictor = paddle_infer.create_predictor(config)" in document, fmt  # what to paste, as the rule requires it
        assert re.sub(r"Recommended configuration: within", "", document).count("Recommended configuration") == 0, fmt
    recommendation = report["verification"]["recommendation"]
    assert (recommendation["title"], recommendation["headline"]) == (title, headline)
    assert recommendation["enforced"] == ["PD-CPU-010"] and recommendation["comparison"]["verdict"] == "regressed"
    finding = next(f for f in report["findings"] if f["rule_id"] == "PD-CFG-001")
    assert finding["status"] == "pass" and finding["message"] == f"no configuration measured faster than the service's; {headline}"


def test_the_service_s_configuration_kept_is_not_shown_as_code_to_paste(tmp_path):
    step = "no change measured decisively faster than the service's configuration"
    documents, report = every_format(tmp_path, facts_holding(SERVICE, None, [], [step]))
    for fmt, document in documents.items():
        assert "Recommended configuration: keep the service's" in document, fmt
        assert f"the service's configuration is kept: {step}" in document, fmt
        assert "create_predictor(config)" not in document, fmt
    assert report["verification"]["recommendation"]["title"] == "Recommended configuration: keep the service's"
    finding = next(f for f in report["findings"] if f["rule_id"] == "PD-CFG-001")
    assert finding["status"] == "pass" and step in finding["message"]


def test_a_recommendation_measured_faster_keeps_its_plain_title(tmp_path):
    whole = measured("baseline", "recommended", FASTER)
    documents, report = every_format(tmp_path, facts_holding(WITHIN.vary(feed_fetch=True), whole, ["PD-CPU-010"], ["..."]))
    for fmt, document in documents.items():
        words = " ".join(document.replace("#", "").split())
        if fmt == "text":  # PD-CFG-001's line above the section says it: the first screen says it once
            above_its_code = words.split("Recommended configuration", 1)[1].split("import paddle.inference", 1)[0]
            assert describe(whole) not in above_its_code and words.count(describe(whole)) == 2, words
            assert f"PD-CFG-001 A measurably faster predictor configuration exists for this model: measured {describe(whole)}" in words
        else:
            assert f"Recommended configuration measured as a whole: {describe(whole)}" in words, fmt
    finding = next(f for f in report["findings"] if f["rule_id"] == "PD-CFG-001")
    assert finding["status"] == "fail" and describe(whole) in finding["message"]


@pytest.mark.slow
def test_the_recogniser_s_recommendation_never_reads_faster_than_it_measured(tmp_path):
    """The model zoo's text recogniser, 8 threads on this machine's CPUs (PD-CPU-010 fails where they are
    fewer): whatever the machine measures, what is offered beyond the start measured decisively faster
    together, and the section's title, its headline and PD-CFG-001 say the same of the whole."""
    from paddle_doctor.verify.modelzoo import build_model

    model = build_model("recognizer", "pir", tmp_path / "rec")
    result = run_doctor("--model", str(model), "--shape", "x:1x3x48x320", "--pid", "none", "--threads", "8",
                        "--budget", "20", "--json", timeout=300)
    report = report_json(result)
    service = report["verification"]["baseline"]
    recommendation = report["verification"]["recommendation"]
    enforced = re.match(r"threads=(\d+): ", recommendation["steps"][0]) if recommendation["enforced"] else None
    start = dict(service, threads=int(enforced.group(1))) if enforced else service
    together = [step for step in recommendation["steps"] if " measured together against " in step]
    changed = recommendation["config"] != start
    if together:  # changes were adopted one at a time: not offered only where the whole measured slower or no faster than the start
        offered = together[0].endswith((": offered", ": offered, each change measured faster where it was adopted, the whole not confirmed"))
        assert len(together) == 1 and offered == changed, recommendation["steps"]
    else:
        assert not changed, recommendation["steps"]
    whole = recommendation["comparison"]
    faster = whole is not None and whole["verdict"] == "improved"
    unconfirmed = recommendation["unconfirmed"] is not None
    finding = next(f for f in report["findings"] if f["rule_id"] == "PD-CFG-001")
    assert (finding["status"] == "fail") == (faster or unconfirmed), (finding, recommendation)
    assert faster == (recommendation["title"] == "Recommended configuration"), recommendation
    if not faster:
        assert recommendation["headline"] in finding["message"]


def test_an_unbounded_onednn_cache_is_bounded_in_the_recommendation_as_pd_mem_001_says():
    """oneDNN on with its shape cache unbounded (PD-MEM-001 fails): the search starts with it bounded, and a
    recommendation not measured faster says which rule moved it there; turning oneDNN on bounds it too."""
    from paddle_doctor.base.vocabulary import Experiment
    from paddle_doctor.judge.offered import title
    from paddle_doctor.verify.recommend import candidates_for

    service = SERVICE.vary(threads=2, onednn_cache_capacity=0)
    start = service.vary(onednn_cache_capacity=10)
    measurer = StandInMeasurer({(service, start): UNDECIDED})
    ctx = Context(make_facts(quota=2, threads=2, onednn=True), measurer=measurer, baseline=service, inputs={},
                  max_drift=0.01, new_session=None)
    recommendation = recommend(ctx, {}, 0.0, "m/inference.json", "m/inference.pdiparams")
    assert recommendation.config == start and recommendation.enforced == ["PD-MEM-001"]
    assert "config.set_mkldnn_cache_capacity(10)" in recommendation.snippet.splitlines()
    assert recommendation.steps[0].startswith("oneDNN cache 10: the service leaves oneDNN's shape cache unbounded (0: PD-MEM-001)")
    assert title(recommendation) == "Recommended configuration: with oneDNN's shape cache bounded (PD-MEM-001), not measured faster"
    assert measurer.raced == [(service, start)]
    off = service.vary(onednn=False, onednn_cache_capacity=-1)
    assert candidates_for(Experiment.ONEDNN, ctx, off) == [off.vary(onednn=True, onednn_cache_capacity=10)]
