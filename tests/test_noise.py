"""Decisions that hold on a busy machine (doctor/verify/noise.py, the recommender's rule): how busy
the machine was is measured and said, the baseline's A/A difference sets the least effect decided, and
the recommendation leaves the service's value only on a decisive measurement.

The CPU counters are read from a recording (tests/fixtures/noise: /proc/stat and the processes'
stat before and after one second with a busy loop on CPU 0 and a spinning worker pinned to CPU 1)
and live, beside a real busy loop."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SPIN
from paddle_doctor.base.vocabulary import Effect, Precision
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.verification import ArmResult, ComparisonResult, ExperimentResult, MachineNoise
from paddle_doctor.judge.verdict_words import effect_words, noise_words
from paddle_doctor.verify import stats
from paddle_doctor.verify.noise import CpuMeter, CpuShare, cpu_ticks, machine_noise, noise_floor, process_ticks

pytestmark = pytest.mark.timing  # judges live timings: .ci/run runs these again on the machine as it is

RECORDED = Path(__file__).parent / "fixtures" / "noise"
WORKER, DOCTOR = 20043, 19961  # the pids of the recording


def test_cpu_counters_are_read_from_the_kernel_s_formats():
    stat = (RECORDED / "before" / "proc" / "stat").read_text()
    total, idle, steal = cpu_ticks(stat, {1})
    assert (total, idle, steal) == (66081 + 256 + 18450 + 33188 + 650 + 0 + 166 + 98, 33188 + 650, 98)
    assert cpu_ticks(stat, {0, 1})[0] > total and cpu_ticks(stat, {7}) == (0, 0, 0)
    worker = (RECORDED / "before" / "proc" / str(WORKER) / "stat").read_text()
    fields = worker.rpartition(")")[2].split()
    assert process_ticks(worker) == int(fields[11]) + int(fields[12])
    assert process_ticks("42 (a) b) c) R " + " ".join(["0"] * 10) + " 7 5 0 0") == 12  # a name with spaces and parentheses


def test_the_recorded_second_says_how_much_went_to_other_processes():
    """The worker was pinned to CPU 1: only CPU 1 counts, and the worker's own ticks are not 'others'."""
    before = CpuMeter(WORKER, str(RECORDED / "before"), own_pid=DOCTOR)
    after = CpuMeter(WORKER, str(RECORDED / "after"), own_pid=DOCTOR)
    assert before.cpus == {1}
    first, second = before.read(), after.read()
    share = CpuShare()
    share.add(first, second)
    busy = (second.total - second.idle) - (first.total - first.idle)
    assert share.total == second.total - first.total and share.others == busy - (second.measuring - first.measuring)
    noise = machine_noise(share, None, 0.03)
    assert noise.others_share == pytest.approx(share.others / share.total, abs=1e-4) and noise.throttled_s is None
    assert noise_words(noise, 0.03).startswith(f"the machine was busy: {noise.others_share:.0%} of the CPU time went to other processes")


def test_missing_counters_add_nothing(tmp_path):
    share = CpuShare()
    share.add(None, CpuMeter(WORKER, str(RECORDED / "after"), own_pid=DOCTOR).read())
    assert share.total == 0 and machine_noise(share, None, 0.03).others_share is None
    assert CpuMeter(WORKER, str(tmp_path), own_pid=DOCTOR).read() is None  # a root with no /proc to read


def test_a_live_busy_loop_beside_the_worker_is_counted_and_the_worker_is_not():
    """A real busy loop on CPU 0 and a real spinning 'worker' on CPU 1, each started and seen spinning
    before the counters are read: of the worker's CPUs (1) the worker's own ticks are excluded, and of
    both CPUs the busy loop is at least a third of the time."""
    started = [subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)], stdout=subprocess.PIPE, text=True) for cpu in (0, 1)]
    try:
        for process in started:
            assert process.stdout.readline().strip() == "spinning"
        busy, worker = started
        on_worker_cpus, on_both = CpuMeter(worker.pid), CpuMeter(worker.pid)
        on_both.cpus = {0, 1}
        before = (on_worker_cpus.read(), on_both.read())
        time.sleep(1.0)  # a measured second; the doctor waits on its worker then, as this test does
        after = (on_worker_cpus.read(), on_both.read())
    finally:
        for process in started:
            process.kill()
            process.wait(timeout=10)
    own, both = CpuShare(), CpuShare()
    own.add(before[0], after[0])
    both.add(before[1], after[1])
    worker_ticks = after[0].measuring - before[0].measuring
    # /proc/stat and the worker's stat are read moments apart: a spinning worker may show a tick more than its CPU
    assert worker_ticks > 0 and own.others <= max(0, own.total - worker_ticks) + 2, (own, worker_ticks)
    assert both.others >= both.total / 3, both  # the busy loop held CPU 0, whoever else ran


def aa(ratio: float, low: float, high: float, rounds: int = 20) -> ComparisonResult:
    return ComparisonResult("baseline", "baseline again", ratio, low, high, Effect.NO_EFFECT, rounds)


def test_a_baseline_that_differs_from_itself_raises_the_least_effect_decided():
    assert noise_floor(None, 0.03) == 0.03
    assert noise_floor(aa(1.0, 0.99, 1.01), 0.03) == 0.03  # a quiet machine: --min-effect
    assert noise_floor(aa(1.0, 0.5, 2.0), 0.03) == 0.03  # noisy, but the baseline does not differ from itself
    assert noise_floor(aa(1.08, 1.05, 1.11), 0.03) == pytest.approx(0.08)  # it does: by 8%
    assert noise_floor(aa(1 / 1.06, 1 / 1.09, 1 / 1.02), 0.03) == pytest.approx(0.06)
    assert noise_floor(aa(1.5, 1.2, 2.0, rounds=3), 0.03) == 0.03  # too few rounds to say


def test_an_effect_within_the_noise_floor_is_not_decided():
    """The same 6% speed-up, decided on a steady machine, is not where the baseline drifts by 10%."""
    baseline = [[10.0 * (1 + 0.002 * ((i * 7 + j) % 5)) for j in range(8)] for i in range(12)]
    candidate = [[ms / 1.06 for ms in block] for block in baseline]
    assert stats.compare(baseline, candidate).verdict == Effect.IMPROVED
    noisy = stats.compare(baseline, candidate, floor=0.10)
    assert noisy.verdict == Effect.UNDECIDED and noisy.ratio == pytest.approx(1.06)
    same = stats.compare(baseline, baseline, floor=0.5)  # a wide floor never makes an effect "none"
    assert same.verdict == Effect.NO_EFFECT


def test_the_report_says_how_busy_the_machine_was():
    busy = MachineNoise(0.41, 0.02, 1.5, aa(1.0526, 1.03, 1.07, 30), 0.0526)
    words = noise_words(busy, 0.03)
    assert words.startswith("the machine was busy: 41% of the CPU time went to other processes; 2% was stolen by the hypervisor")
    assert "throttled the container for 1.50 s" in words
    assert words.endswith("the baseline differed from itself by 5.3% (A/A over 30 rounds), so no smaller effect is decided")
    with_service = dataclasses.replace(busy, service_share=0.12)
    assert noise_words(with_service, 0.03).startswith(
        "the machine was busy: 41% of the CPU time went to other processes, 12% of it to the service itself; 2% was stolen")
    quiet = MachineNoise(0.03, 0.0, 0.0, aa(1.0, 0.99, 1.01, 40), 0.03)  # the A/A said nothing beyond --min-effect
    assert noise_words(quiet, 0.03) == "the machine was quiet: 3% of the CPU time went to other processes"
    assert noise_words(MachineNoise(None, None, None, None, 0.03), 0.03) == "how busy the machine was could not be read"


SERVICE = PredictorConfig(threads=2, onednn=True)


class ContextMeasurer:
    """Answers the recommender's races with scripted comparisons, recording what was raced, and which
    races ran in a second worker (the measurer ``beside`` returns shares its answers and records)."""

    def __init__(self, answers: dict[str, ComparisonResult], raced: list | None = None, beside_raced: list | None = None,
                 second_worker: bool = False):
        self.answers, self.min_effect, self.second_worker = answers, 0.03, second_worker
        self.raced = [] if raced is None else raced
        self.beside_raced: list[str] = [] if beside_raced is None else beside_raced

    def race(self, baseline, candidates, budget_s, what, extend_s=0.0, settle_by=None):
        """The scripted answer for ``what`` once, then: undecided."""
        self.raced.append((what, baseline, candidates))
        if self.second_worker:
            self.beside_raced.append(what)
        answer = self.answers.pop(what, ComparisonResult("baseline", "", 1.0, 0.9, 1.1, Effect.UNDECIDED, 10))
        return [dataclasses.replace(answer, candidate=label) for label, _ in candidates]

    def beside(self, session):
        assert isinstance(session, StandInSession) and not session.closed
        return ContextMeasurer(self.answers, self.raced, self.beside_raced, second_worker=True)

    def arm_result(self, label, config):
        return ArmResult(label, config)


class StandInSession:
    """A worker the recommender starts for a second measurement; it must close it."""

    started: list[StandInSession] = []

    def __init__(self):
        self.closed = False
        StandInSession.started.append(self)

    def close(self):
        self.closed = True


WHOLE_FASTER = ComparisonResult("baseline", "", 1.3, 1.2, 1.4, Effect.IMPROVED, 12)


def recommendation_for(service, measured, answers, quota=2):
    from factories import make_facts
    from paddle_doctor.verify.experiments import Context
    from paddle_doctor.verify.recommend import recommend

    facts = make_facts(quota=quota, threads=service.threads, onednn=service.onednn)
    # the changes adopted, decisively faster together than where the search started: offered
    measurer = ContextMeasurer({"recommend:together": WHOLE_FASTER, "recommended": WHOLE_FASTER, **answers})
    ctx = Context(facts, measurer=measurer, baseline=service, inputs={}, max_drift=0.01, new_session=StandInSession)
    return recommend(ctx, measured, 30.0, "m/inference.json", "m/inference.pdiparams"), measurer


def experiment(name, service, label, changes, verdict, ratio, low, high):
    return ExperimentResult(name, "measured", arms=[ArmResult("baseline", service), ArmResult(label, service.vary(**changes))],
                            comparisons=[ComparisonResult("baseline", label, ratio, low, high, verdict, 12)])


@pytest.mark.parametrize("verdict, ratio, low, high", [
    (Effect.UNDECIDED, 1.08, 0.97, 1.2),      # undecided: within noise
    (Effect.IMPROVED, 1.05, 1.01, 1.09),      # decided faster, but its interval reaches under the 3% minimum effect
    (Effect.NO_EFFECT, 1.01, 0.99, 1.03),
])
def test_a_change_within_the_noise_keeps_the_service_s_setting(verdict, ratio, low, high):
    ir_off = experiment("ir_optim", SERVICE, "IR optim off", {"ir_optim": False}, verdict, ratio, low, high)
    recommendation, measurer = recommendation_for(SERVICE, {"ir_optim": ir_off}, {})
    assert recommendation.config == SERVICE and recommendation.comparison is None and not measurer.raced
    assert any(step.startswith("ir_optim kept as it is") and "IR optim off vs baseline" in step for step in recommendation.steps)


def test_a_decisive_change_is_adopted():
    ir_off = experiment("ir_optim", SERVICE, "IR optim off", {"ir_optim": False}, Effect.IMPROVED, 1.3, 1.2, 1.4)
    recommendation, _ = recommendation_for(SERVICE, {"ir_optim": ir_off}, {})
    assert recommendation.config == SERVICE.vary(ir_optim=False)


def test_over_the_budget_the_search_starts_where_pd_cpu_010_s_fix_says_and_moves_only_on_decisive_evidence():
    """8 threads on 2 CPUs: the search starts at 2 threads (the fix PD-CPU-010 prints), whatever 1
    thread measured against 8; 1 thread replaces 2 only when it is decisively faster in context."""
    service = PredictorConfig(threads=8, onednn=False)
    threads = ExperimentResult("threads", "measured", arms=[ArmResult("baseline", service)] + [
        ArmResult(f"threads={n}", service.vary(threads=n)) for n in (1, 2)], comparisons=[
        ComparisonResult("baseline", "threads=1", 1.30, 1.1, 1.5, Effect.IMPROVED, 12),
        ComparisonResult("baseline", "threads=2", 1.25, 1.1, 1.4, Effect.IMPROVED, 12)])
    undecided = ComparisonResult("baseline", "threads=1", 1.04, 0.95, 1.14, Effect.UNDECIDED, 12)
    recommendation, measurer = recommendation_for(service, {"threads": threads}, {"recommend:threads": undecided})
    assert recommendation.config.threads == 2 and recommendation.enforced == ["PD-CPU-010"]
    assert "as that rule's fix says" in recommendation.steps[0] and "threads=2 vs baseline: 1.25x faster" in recommendation.steps[0]
    assert [what for what, *_ in measurer.raced] == ["recommend:threads", "recommended"]
    faster = ComparisonResult("baseline", "threads=1", 1.4, 1.25, 1.55, Effect.IMPROVED, 12)
    recommendation, _ = recommendation_for(service, {"threads": threads}, {"recommend:threads": faster})
    assert recommendation.config.threads == 1


def test_a_switch_undecided_in_context_keeps_its_value_whatever_another_configuration_measured():
    """oneDNN on measured 6x faster at the service's configuration, where the search starts: adopted.
    IR optim off measured 1.3x faster there, with oneDNN off: oneDNN's kernels are other kernels, so
    only a race in context decides it; one that decides nothing (a busy machine's short slice)
    keeps the setting, one that finds it decisively faster moves it."""
    service = PredictorConfig(threads=2, onednn=False)
    onednn = experiment("onednn", service, "oneDNN on", {"onednn": True}, Effect.IMPROVED, 6.0, 5.5, 6.5)
    ir_off = experiment("ir_optim", service, "IR optim off", {"ir_optim": False}, Effect.IMPROVED, 1.3, 1.2, 1.4)
    recommendation, _ = recommendation_for(service, {"onednn": onednn, "ir_optim": ir_off}, {})
    assert recommendation.config == service.vary(onednn=True)
    assert any(step.startswith("ir_optim kept as it is") and "nothing measured decisively faster" in step
               for step in recommendation.steps)
    faster = ComparisonResult("baseline", "", 1.3, 1.2, 1.4, Effect.IMPROVED, 12)
    recommendation, _ = recommendation_for(service, {"onednn": onednn, "ir_optim": ir_off}, {"recommend:ir_optim": faster})
    assert recommendation.config == service.vary(onednn=True, ir_optim=False)


def test_a_thread_count_moves_only_on_a_race_in_context():
    """8 threads on 2 CPUs: in the threads experiment (against the service's 8) 1 thread's whole
    interval lies far above 2 threads'; the race of 1 against 2 threads in context decides nothing:
    2 threads stay. Decisively faster in context, 1 thread is adopted."""
    service = PredictorConfig(threads=8, onednn=True)
    threads = ExperimentResult("threads", "measured", arms=[ArmResult("baseline", service)] + [
        ArmResult(f"threads={n}", service.vary(threads=n)) for n in (1, 2)], comparisons=[
        ComparisonResult("baseline", "threads=1", 3.0, 2.8, 3.2, Effect.IMPROVED, 12),
        ComparisonResult("baseline", "threads=2", 1.3, 1.2, 1.4, Effect.IMPROVED, 12)])
    recommendation, _ = recommendation_for(service, {"threads": threads}, {})
    assert recommendation.config.threads == 2
    faster = ComparisonResult("baseline", "threads=1", 1.25, 1.15, 1.35, Effect.IMPROVED, 12)
    recommendation, _ = recommendation_for(service, {"threads": threads}, {"recommend:threads": faster})
    assert recommendation.config.threads == 1


def test_bf16_measured_at_a_service_with_onednn_off_is_no_evidence_where_onednn_is_on():
    """At the service (oneDNN off) the bf16 candidate turns oneDNN on too: its 5x is oneDNN's. Once
    oneDNN is adopted, a bf16 race in context that decides nothing keeps fp32."""
    service = PredictorConfig(threads=2, onednn=False)
    onednn = experiment("onednn", service, "oneDNN on", {"onednn": True}, Effect.IMPROVED, 6.0, 5.5, 6.5)
    bf16 = experiment("bf16", service, "oneDNN on, bf16", {"precision": Precision.BF16}, Effect.IMPROVED, 5.0, 4.5, 5.5)
    recommendation, _ = recommendation_for(service, {"onednn": onednn, "bf16": bf16}, {})
    assert recommendation.config == service.vary(onednn=True)
    assert any(step.startswith("bf16 kept as it is") for step in recommendation.steps)


def test_switches_measured_within_the_cpu_budget_are_taken_as_measured_in_context():
    """8 threads on 2 CPUs: the switch experiments ran at 2 threads (where the search starts), so oneDNN
    on, decisive there, is adopted without a race of its own; it names the configuration it was measured at."""
    service = PredictorConfig(threads=8, onednn=False)
    start = service.vary(threads=2)
    onednn = ExperimentResult("onednn", "measured", arms=[ArmResult("baseline", start), ArmResult("oneDNN on", start.vary(onednn=True))],
                              comparisons=[ComparisonResult("baseline at threads=2", "oneDNN on", 6.0, 5.5, 6.5, Effect.IMPROVED, 12)])
    recommendation, measurer = recommendation_for(service, {"onednn": onednn}, {})
    assert recommendation.config == start.vary(onednn=True)
    # no race of oneDNN at 2 threads; only the second pass's look at oneDNN off, once it is on, and the whole
    # (against the start at 2 threads, then against the service's)
    assert [(what, base) for what, (_, base), _ in measurer.raced] == [("recommend:onednn", start.vary(onednn=True)),
                                                                      ("recommend:together", start), ("recommended", service)]
    assert any(step.startswith("oneDNN on: oneDNN on vs baseline at threads=2: 6.00x faster") for step in recommendation.steps)
    assert not any("no time was left" in step for step in recommendation.steps)


def test_thread_counts_within_noise_of_the_fastest_keep_the_one_nearest_the_service_s():
    """4 CPUs, 4 threads: 1, 2 and 3 threads all decisively faster, 3 and 2 within noise of each other,
    1 decisively slower than them: 3 threads, whichever of the tied ones measured fastest this time."""
    service = PredictorConfig(threads=4, onednn=True)

    def threads(*ratios):
        return ExperimentResult("threads", "measured", arms=[ArmResult("baseline", service)] + [
            ArmResult(f"threads={n}", service.vary(threads=n)) for n in (1, 2, 3)], comparisons=[
            ComparisonResult("baseline", f"threads={n}", ratio, low, high, Effect.IMPROVED, 12)
            for n, (ratio, low, high) in zip((1, 2, 3), ratios)])

    for two, three in (((1.30, 1.20, 1.40), (1.25, 1.15, 1.35)), ((1.25, 1.15, 1.35), (1.30, 1.20, 1.40))):
        recommendation, _ = recommendation_for(service, {"threads": threads((1.1, 1.05, 1.14), two, three)}, {}, quota=4)
        assert recommendation.config.threads == 3, recommendation.steps
    recommendation, _ = recommendation_for(service, {"threads": threads((1.1, 1.05, 1.14), (1.6, 1.5, 1.7), (1.25, 1.15, 1.35))}, {},
                                           quota=4)
    assert recommendation.config.threads == 2  # decisively faster than 3 threads: it moves that far


def test_the_live_service_s_cpu_time_is_told_apart_from_the_other_processes():
    """A real 'service' spinning on CPU 0 and a real 'worker' on CPU 1, each seen spinning first: of
    both CPUs, the service's time is counted as another process's, and told apart; the words say so."""
    started = [subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)], stdout=subprocess.PIPE, text=True) for cpu in (0, 1)]
    try:
        for process in started:
            assert process.stdout.readline().strip() == "spinning"
        service, worker = started
        meter = CpuMeter(worker.pid, service_pid=service.pid)
        meter.cpus = {0, 1}
        before = meter.read()
        time.sleep(1.0)  # a measured second; the doctor waits on its worker then, as this test does
        after = meter.read()
    finally:
        for process in started:
            process.kill()
            process.wait(timeout=10)
    share = CpuShare()
    share.add(before, after)
    assert after.service > before.service and share.service == min(share.others, after.service - before.service), share
    noise = machine_noise(share, None, 0.03)
    assert noise.service_share is not None and noise.service_share <= noise.others_share
    assert noise_words(noise, 0.03).startswith(f"the machine was busy: {noise.others_share:.0%} of the CPU time went to other "
                                               f"processes, {noise.service_share:.0%} of it to the service itself")
    without = CpuShare()
    without.add(CpuMeter(worker.pid).read(), CpuMeter(worker.pid).read())  # no service given: none told apart
    assert machine_noise(without, None, 0.03).service_share is None


def test_latency_stability_judges_the_service_s_own_configuration():
    """The first experiment's baseline ran at 2 threads of the service's 8 (a switch, within the CPU
    budget), noisy; the threads experiment's baseline is the service's own, steady: PD-CPU-015 judges that."""
    from factories import make_facts
    from paddle_doctor.facts.verification import ModelFacts, VerificationFacts

    from checks import latency_stability

    service = PredictorConfig(threads=8, onednn=False)
    verification = VerificationFacts(ModelFacts("m", "pir", "m/inference.json", None, {}), 20, 0.03, 0.01, baseline=service, experiments=[
        ExperimentResult("onednn", "measured", arms=[ArmResult("baseline", service.vary(threads=2), runs=40, p50=10.0, p99=30.0, cv=0.6)]),
        ExperimentResult("threads", "measured", arms=[ArmResult("baseline", service, runs=40, p50=12.0, p99=13.0, cv=0.05)])])
    facts = dataclasses.replace(make_facts(quota=2, threads=8, onednn=False), verification=verification)
    (finding,) = latency_stability.check(facts)
    assert finding.status.value == "pass" and "p50 12.00 ms" in finding.message, finding.message


@pytest.mark.slow
def test_a_busy_machine_s_undecided_race_runs_on_within_what_can_be_spared(models):
    """A race given no time stops after its first two rounds, undecided; beside a real busy loop on
    CPU 0 (seen spinning first), given 3 s to spare, it runs on past them, and no longer than that."""
    from paddle_doctor.verify.measure import Measurer
    from test_verify import CNN_FEEDS, open_worker

    base = PredictorConfig(threads=2, onednn=True)
    session = open_worker(models["cnn-pir"], CNN_FEEDS)
    spinner = subprocess.Popen([sys.executable, "-c", SPIN, "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert spinner.stdout.readline().strip() == "spinning"
        measurer = Measurer(session, min_effect=0.03)
        # no time to settle by: only what the busy machine can spare keeps a race going
        (cut,) = measurer.race(("baseline", base), [("oneDNN off", base.vary(onednn=False))], 0, "cut", settle_by=time.monotonic())
        began = time.monotonic()
        (ran_on,) = measurer.race(("baseline", base), [("threads=1", base.vary(threads=1))], 0, "ran on", extend_s=3.0,
                                  settle_by=began)
        took = time.monotonic() - began
    finally:
        spinner.kill()
        spinner.wait(timeout=10)
        session.close()
    assert cut.rounds == 2 and cut.verdict == Effect.UNDECIDED
    assert measurer.noise().others_share >= 0.10  # the busy loop's CPU counted
    assert ran_on.rounds > 2 and took < 3.0 + 2.0, (ran_on, took)


@pytest.mark.parametrize("verdict, ratio, low, high, settled", [
    (Effect.IMPROVED, 1.3, 1.2, 1.4, True),
    (Effect.IMPROVED, 1.10, 1.01, 1.19, False),    # decided, but not past --min-effect by its whole interval: the search could not adopt it
    (Effect.IMPROVED, 6.8, 1.7, 26.9, False),      # decided, but no number to print
    (Effect.REGRESSED, 1 / 1.3, 1 / 1.4, 1 / 1.2, True),
    (Effect.NO_EFFECT, 1.0, 0.98, 1.02, True),
    (Effect.UNDECIDED, 1.02, 0.9, 1.1, False),
])
def test_a_race_stops_early_only_on_comparisons_settled_for_good(verdict, ratio, low, high, settled):
    from paddle_doctor.verify.measure import settled as is_settled

    assert is_settled(ComparisonResult("baseline", "candidate", ratio, low, high, verdict, 12), 0.03) is settled


def test_onednn_and_bf16_measured_where_the_search_starts_are_adopted_before_any_race():
    """8 threads on 2 CPUs, oneDNN off: oneDNN was measured at 2 threads, bf16 at 2 threads with oneDNN
    on; both decisive, both are adopted as measured, and the search's first race is the threads one,
    in their context."""
    service = PredictorConfig(threads=8, onednn=False)
    start = service.vary(threads=2)
    onednn = ExperimentResult("onednn", "measured", arms=[ArmResult("baseline", start), ArmResult("oneDNN on", start.vary(onednn=True))],
                              comparisons=[ComparisonResult("baseline at threads=2", "oneDNN on", 6.0, 5.5, 6.5, Effect.IMPROVED, 12)])
    on = start.vary(onednn=True)
    bf16 = ExperimentResult("bf16", "measured", arms=[ArmResult("baseline", on), ArmResult("bf16", on.vary(precision=Precision.BF16))],
                            comparisons=[ComparisonResult("baseline at threads=2, oneDNN on", "bf16", 1.5, 1.4, 1.6, Effect.IMPROVED, 12)])
    threads = ExperimentResult("threads", "measured", arms=[ArmResult("baseline", service)] + [
        ArmResult(f"threads={n}", service.vary(threads=n)) for n in (1, 2)], comparisons=[
        ComparisonResult("baseline", f"threads={n}", 1.0, 0.9, 1.1, Effect.UNDECIDED, 12) for n in (1, 2)])
    recommendation, measurer = recommendation_for(service, {"onednn": onednn, "bf16": bf16, "threads": threads}, {})
    assert recommendation.config == on.vary(precision=Precision.BF16)
    first_what, (_, first_base), _ = measurer.raced[0]
    assert first_what == "recommend:threads" and first_base == recommendation.config


SMALL = ComparisonResult("baseline", "IR optim off", 1.06, 1.04, 1.08, Effect.IMPROVED, 12)  # decisive, within a worker's luck


@pytest.mark.parametrize("again, adopted", [
    (ComparisonResult("baseline", "", 1.07, 1.035, 1.11, Effect.IMPROVED, 12), True),
    (ComparisonResult("baseline", "", 1.01, 0.97, 1.05, Effect.UNDECIDED, 12), False),
    (ComparisonResult("baseline", "", 1.03, 1.01, 1.05, Effect.IMPROVED, 12), False),  # faster, but not by --min-effect
    (ComparisonResult("baseline", "", 0.97, 0.95, 0.99, Effect.REGRESSED, 12), False),
])
def test_a_small_decisive_change_moves_a_setting_only_when_a_second_worker_measures_it_decisively_faster_too(again, adopted):
    """One worker's predictors may measure a switch up to WORKER_SPREAD faster than another's: a change
    decisive by less is raced again in a worker started for it (and closed after), and adopted only if
    decisive there too."""
    StandInSession.started.clear()
    ir_off = experiment("ir_optim", SERVICE, "IR optim off", {"ir_optim": False}, SMALL.verdict, SMALL.ratio, SMALL.ci_low, SMALL.ci_high)
    recommendation, measurer = recommendation_for(SERVICE, {"ir_optim": ir_off}, {"recommend:ir_optim again": again})
    assert measurer.beside_raced == ["recommend:ir_optim again"]
    (session,) = StandInSession.started
    assert session.closed
    (what, baseline, candidates), *_ = measurer.raced
    assert baseline == ("baseline", SERVICE) and candidates == [("IR optim off", SERVICE.vary(ir_optim=False))]
    assert recommendation.config == (SERVICE.vary(ir_optim=False) if adopted else SERVICE)
    (step,) = [step for step in recommendation.steps if "IR optim off vs baseline: 1.06x faster" in step]
    assert ("in a second worker " + effect_words(again)) in step
    assert step.startswith("IR optim off: ") if adopted else step.startswith("ir_optim kept as it is")
    if not adopted:
        assert "within what two workers measure apart" in step


def test_a_change_decisive_beyond_the_worker_spread_is_adopted_on_its_first_measurement():
    from paddle_doctor.verify.recommend import WORKER_SPREAD

    StandInSession.started.clear()
    ir_off = experiment("ir_optim", SERVICE, "IR optim off", {"ir_optim": False}, Effect.IMPROVED, 1.3, 1.0 + WORKER_SPREAD, 1.45)
    recommendation, measurer = recommendation_for(SERVICE, {"ir_optim": ir_off}, {})
    assert recommendation.config == SERVICE.vary(ir_optim=False) and measurer.beside_raced == [] and not StandInSession.started


def test_with_no_time_left_a_small_change_is_not_adopted_unconfirmed():
    from factories import make_facts
    from paddle_doctor.verify.experiments import Context
    from paddle_doctor.verify.recommend import recommend

    StandInSession.started.clear()
    ir_off = experiment("ir_optim", SERVICE, "IR optim off", {"ir_optim": False}, SMALL.verdict, SMALL.ratio, SMALL.ci_low, SMALL.ci_high)
    measurer = ContextMeasurer({})
    ctx = Context(make_facts(quota=2, threads=SERVICE.threads, onednn=SERVICE.onednn), measurer=measurer, baseline=SERVICE,
                  inputs={}, max_drift=0.01, new_session=StandInSession)
    recommendation = recommend(ctx, {"ir_optim": ir_off}, 0.0, "m/inference.json", "m/inference.pdiparams")
    assert recommendation.config == SERVICE and measurer.beside_raced == [] and not StandInSession.started
    assert any(step.startswith("ir_optim kept as it is") and "no time was left to measure it in a second worker" in step
               for step in recommendation.steps), recommendation.steps


def test_a_measurer_beside_another_races_in_its_own_worker_within_the_same_deadline(models):
    """Real predictors: the second worker's races load and run there, not in the first worker, and its
    requests count against the first's deadline."""
    from paddle_doctor.verify.deadline import Deadline
    from paddle_doctor.verify.measure import Measurer
    from test_verify import CNN_FEEDS, open_worker

    base = PredictorConfig(threads=1, onednn=False)
    first, second = open_worker(models["cnn-pir"], CNN_FEEDS), open_worker(models["cnn-pir"], CNN_FEEDS)
    try:
        deadline = Deadline(60.0)
        measurer = Measurer(first, min_effect=0.03, deadline=deadline)
        measurer.load(base)
        beside = measurer.beside(second)
        (again,) = beside.race(("baseline", base), [("IR optim off", base.vary(ir_optim=False))], 0, "second worker",
                               settle_by=time.monotonic())  # given no time: its first two rounds
    finally:
        first.close()
        second.close()
    assert again.rounds == 2 and again.candidate == "IR optim off"
    noise = measurer.noise()  # the second worker's rounds are in the first's account of the machine
    assert noise.aa is not None and noise.aa.rounds == 2 and noise.others_share is not None
    assert beside.session is second and beside.deadline is deadline and beside.min_effect == measurer.min_effect
    assert set(measurer.loaded) == {base.key()} and set(beside.loaded) == {base.key(), base.vary(ir_optim=False).key()}


@pytest.mark.parametrize("busy", [True, False])
def test_on_a_busy_machine_the_small_switches_give_their_time_to_the_larger_effects(monkeypatch, busy):
    """The experiments run in order, the largest effects first; on a busy machine (counted over the races so
    far) IR optim and feed/fetch ops are not measured, and say why; on a quiet one every experiment runs."""
    from paddle_doctor.base.vocabulary import Experiment
    from paddle_doctor.facts.verification import ModelFacts, VerificationFacts
    from paddle_doctor.verify import experiments, run
    from paddle_doctor.verify.deadline import Deadline
    from paddle_doctor.verify.experiments import Context

    ran: list[str] = []

    def runner(name):
        def measure(ctx, budget_s):
            ran.append(name)
            return ExperimentResult(name, "skipped", reason="stand-in")
        return measure

    monkeypatch.setattr(experiments, "EXPERIMENTS", {name: (runner(name), share) for name, (_, share) in experiments.EXPERIMENTS.items()})
    monkeypatch.setattr(run, "EXPERIMENTS", experiments.EXPERIMENTS)
    measurer = ContextMeasurer({})
    measurer.cpu = CpuShare(total=100, others=75 if busy else 2)
    ctx = Context(None, measurer=measurer, baseline=PredictorConfig(threads=2, onednn=True), inputs={}, max_drift=0.01,
                  new_session=None)
    started = VerificationFacts(ModelFacts("m", "pir", "m/inference.json", None, {}), 40, 0.03, 0.01, baseline=ctx.baseline)
    verification = run._run_experiments(started, ctx, run.VerifyOptions(budget_s=40), Deadline(40))
    assert verification.error is None
    small = {Experiment.IR_OPTIM, Experiment.FEED_FETCH}
    assert ran[:3] == [Experiment.ONEDNN, Experiment.BF16, Experiment.THREADS]
    assert (small & set(ran)) == (set() if busy else small)
    said = {e.name: e.reason for e in verification.experiments}
    for name in small:
        assert said[name] == ("not measured: the machine was busy (75% of the CPU time to other processes), so its share of "
                              "--budget went to the larger effects and the recommendation" if busy else "stand-in")
