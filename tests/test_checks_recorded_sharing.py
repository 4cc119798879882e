"""PD-SRC-005 and PD-LOAD-001 judged from the threads a record saw run each predictor, and PD-SRC-004
from the predictors a record saw built at one place and run at most once each; ``--measure`` plans one
measurement per distinct model and configuration. From record fixtures (facts), with and without
what the service's source says."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from factories import make_facts, run_check
from paddle_doctor.base.vocabulary import BuiltBy, SourcePatternKind, SourceStatus
from paddle_doctor.checks import shared_predictor, source_predictor_per_request, source_shared_predictor
from paddle_doctor.facts import SourceFacts, SourceLocation, SourcePattern
from paddle_doctor.facts.recorded import BuildSite, CallingThreads, Frame, RecordedPredictor, Sharing
from paddle_doctor.facts.service_record import ServiceRecord
from paddle_doctor.judge.findings import Status
from paddle_doctor.recorder.live import MAX_THREADS
from paddle_doctor.service.record import NotRead, _decoded, planned_measurements
from test_record_predictors import RECORDS, recorded

APP = SourceLocation("/app/app.py", 12)
SHARED_IN_CODE = SourcePattern(SourcePatternKind.SHARED_PREDICTOR_THREADS, APP, "predictor.run() from the executor's threads")
PER_REQUEST_IN_CODE = SourcePattern(SourcePatternKind.PREDICTOR_PER_REQUEST, SourceLocation("/app/app.py", 30),
                                    "create_predictor() in predict()")


def threads(*numbers: int, more: int = 0) -> CallingThreads:
    return CallingThreads(list(numbers), more)


def one_predictor(run_threads: CallingThreads, crossed: int = 0, at_once: int = 1, runs: int = 200) -> RecordedPredictor:
    first = recorded("rapidocr.json").predictors[0]
    return replace(first, runs=replace(first.runs, runs=runs, peak_concurrency=at_once),
                   sharing=Sharing(run_threads, run_threads, run_threads, crossed))


def facts_with(predictors: list[RecordedPredictor], *patterns: SourcePattern, layout: str | None = None):
    record = replace(recorded("rapidocr.json"), predictors=predictors)
    source = SourceFacts(SourceStatus.READ, files=["/app/app.py"], configs=[APP], patterns=list(patterns)) if patterns else SourceFacts()
    return replace(make_facts(quota=2, **({"layout": layout} if layout else {})), service_record=record, service_source=source)


def verdicts(facts) -> dict[str, tuple[Status, str]]:
    found = {}
    for check in (source_shared_predictor.CHECK, shared_predictor.CHECK, source_predictor_per_request.CHECK):
        (finding,) = run_check(check, facts)
        found[finding.rule_id] = (finding.status, finding.message)
    return found


def test_a_predictor_four_threads_run_crossing_each_other_fails_both_rules_from_the_record_alone():
    found = verdicts(facts_with([one_predictor(threads(1, 2, 3, 4), crossed=37, at_once=3)]))
    for rule in ("PD-SRC-005", "PD-LOAD-001"):
        status, message = found[rule]
        assert status == Status.FAIL, message
        assert "was run by 4 threads: 37 of its 200 runs crossed another thread's" in message and "3 of its runs at once" in message
        assert "seen in the record" in message and "lock" not in message.split("with no clone() or pool")[0]


def test_a_predictor_run_from_one_thread_passes_whatever_the_source_says():
    found = verdicts(facts_with([one_predictor(threads(1))], SHARED_IN_CODE))
    for rule in ("PD-SRC-005", "PD-LOAD-001"):
        status, message = found[rule]
        assert status == Status.PASS, message
        assert "was run from one thread (seen in the record)" in message and "not seen at run time" in message
        assert "lock" not in message


def test_a_predictor_four_threads_ran_one_at_a_time_passes_without_claiming_a_lock():
    for rule, (status, message) in verdicts(facts_with([one_predictor(threads(1, 2, 3, 4))])).items():
        if rule != "PD-SRC-004":
            assert status == Status.PASS, message
            assert "run by 4 threads: one call at a time" in message and "lock" not in message


def test_four_threads_seen_one_at_a_time_fail_where_the_code_shares_the_predictor_with_nothing_serialising_them():
    for rule, (status, message) in verdicts(facts_with([one_predictor(threads(1, 2, 3, 4))], SHARED_IN_CODE)).items():
        if rule != "PD-SRC-004":
            assert status == Status.FAIL, message
            assert "run by 4 threads" in message and "/app/app.py:12" in message


def test_threads_past_those_kept_count_toward_the_predictors_threads():
    status, message = verdicts(facts_with([one_predictor(threads(*range(1, 17), more=4), crossed=1)]))["PD-LOAD-001"]
    assert status == Status.FAIL and "run by 20 threads" in message


def test_a_clone_per_thread_passes_each_run_from_one_thread():
    first = one_predictor(threads(1))
    clones = [replace(one_predictor(threads(n)), id=n, built_by=BuiltBy.CLONE, clone_of=0) for n in (2, 3, 4)]
    for rule, (status, message) in verdicts(facts_with([first, *clones], SHARED_IN_CODE)).items():
        if rule != "PD-SRC-004":
            assert status == Status.PASS and "each of the 4 predictors that ran was run from one thread" in message, message


def test_a_record_of_a_recorder_that_noted_no_threads_leaves_the_verdict_to_the_source_and_the_layout():
    old = replace(one_predictor(threads(1)), sharing=None)
    found = verdicts(facts_with([old], SHARED_IN_CODE))
    assert found["PD-SRC-005"][0] == Status.FAIL and "shares one predictor among threads at /app/app.py:12" in found["PD-SRC-005"][1]
    assert found["PD-LOAD-001"][0] == Status.FAIL and "/app/app.py:12" in found["PD-LOAD-001"][1]


def test_with_no_layout_no_record_and_no_source_no_lock_is_claimed():
    (finding,) = run_check(shared_predictor.CHECK, make_facts(quota=2))
    assert finding.status == Status.PASS and "lock" not in finding.message
    (finding,) = run_check(shared_predictor.CHECK, make_facts(quota=2, layout="lock", concurrency=4))
    assert finding.status == Status.PASS and "behind a lock" in finding.message  # the service says so itself


def built_at(line: int, runs: int, number: int, built: int = 1, alive: bool = False) -> RecordedPredictor:
    first = one_predictor(threads(1), runs=runs)
    frame = Frame("/app/classifier.py", line, "_predictor")
    return replace(first, id=number, origin=BuildSite(frame, Frame("/app/app.py", 40, "predict")), built=built, alive=alive)


def test_predictors_built_at_one_place_each_run_once_fail_per_request_naming_the_place_and_the_count():
    churned = [built_at(21, 1, n) for n in range(40)] + [built_at(21, 24, 40, built=24)]  # past 64 kept, folded in
    status, message = verdicts(facts_with(churned))["PD-SRC-004"]
    assert status == Status.FAIL, message
    assert "64 predictors of ch_PP-OCRv4_det_infer were built at /app/classifier.py:21, each run at most once (64 runs in all)" in message


def test_per_request_from_the_record_names_the_source_too_and_stands_without_it():
    churned = [built_at(21, 1, n) for n in range(5)]
    status, message = verdicts(facts_with(churned, PER_REQUEST_IN_CODE))["PD-SRC-004"]
    assert status == Status.FAIL and "/app/classifier.py:21" in message and "/app/app.py:30" in message


@pytest.mark.parametrize("predictors, why", [
    ([built_at(21, 1, 0), built_at(21, 1, 1)], "two are not churn: a service may build two alike"),
    ([built_at(21, 1, 0), built_at(21, 9, 1), built_at(21, 1, 2)], "one of them serves requests"),
    ([built_at(21, 1, 0), built_at(22, 1, 1), built_at(23, 1, 2)], "three places, one each"),
    ([built_at(21, 0, n, alive=True) for n in range(4)], "four built at start in a loop, held, none run yet"),
])
def test_predictors_that_are_not_built_per_request_pass_from_the_record(predictors, why):
    status, message = verdicts(facts_with(predictors))["PD-SRC-004"]
    assert status == Status.PASS, (why, message)
    assert "seen in the record: " in message


def test_measure_plans_one_predictor_per_distinct_model_and_configuration():
    churned = [built_at(21, 1, n) for n in range(10)]
    other = replace(recorded("rapidocr.json").predictors[2], id=10)
    plans = planned_measurements(replace(recorded("rapidocr.json"), predictors=[*churned, other]))
    assert [(plan.predictor, plan.stands_for) for plan in plans] == [(10, []), (0, list(range(1, 10)))]  # the busiest first


def test_a_record_with_more_calling_threads_than_a_recorder_keeps_is_not_read():
    data = json.loads((RECORDS / "rapidocr.json").read_text())
    kept = {"threads": list(range(1, MAX_THREADS + 1)), "more": 0}
    data["predictors"][1]["sharing"] = {"run": kept, "copy_from_cpu": kept, "crossed": 0,
                                        "get_output_handle": {"threads": list(range(1, MAX_THREADS + 2)), "more": 0}}
    with pytest.raises(NotRead) as refused:
        _decoded(json.dumps(data), "/tmp/r.json")
    assert str(refused.value) == (f"/tmp/r.json: not a record (Record.predictors[1].sharing.get_output_handle.threads: "
                                  f"holds more than the {MAX_THREADS} threads a recorder keeps)")
    data["predictors"][1]["sharing"]["get_output_handle"] = kept
    record, _ = _decoded(json.dumps(data), "/tmp/r.json")
    assert record.predictors[1].sharing.run.count() == MAX_THREADS


def test_no_record_and_no_source_skip_the_source_rules_as_before():
    facts = make_facts(quota=2)
    for check in (source_shared_predictor.CHECK, source_predictor_per_request.CHECK):
        (finding,) = run_check(check, facts)
        assert finding.status == Status.SKIP and finding.message.startswith("no service source was read")


def test_a_record_not_read_says_nothing_of_sharing_or_churn():
    assert ServiceRecord().sharing_judged("/app/app.py:12") is None and ServiceRecord().churn() == []


def test_measure_says_how_many_predictors_each_measurement_stands_for():
    from paddle_doctor.pipeline import _recorded_runs, _share_budget

    churned = [built_at(21, 1, n) for n in range(10)]  # the fixture's models are in no file here: none is measured
    said: list[str] = []
    plans = _share_budget(_recorded_runs(replace(recorded("rapidocr.json"), predictors=churned), None), 12, said.append)
    assert [(plan.predictor, plan.stands_for) for plan in plans.planned] == [(0, list(range(1, 10)))]
    assert said[0] == "paddle-doctor: measuring 0 of the record's 10 predictors (one per model and configuration: 1 distinct)"


@pytest.mark.parametrize("run_threads, crossed, said", [
    (threads(1, 2, 3, 4), 37, "; used from 4 threads, 37 runs crossed another thread's"),
    (threads(1, 2), 0, "; used from 2 threads, no run crossed another's"),
    (threads(1), 0, None),
])
def test_the_reports_for_people_say_how_many_threads_used_a_recorded_predictor(run_threads, crossed, said):
    from paddle_doctor.render.service_lines import predictor_line

    line = predictor_line(one_predictor(run_threads, crossed))
    assert line.endswith(said) if said else "used from" not in line, line
