"""Registry and runner: third-party checks register like built-ins; a broken check becomes an
error finding with its reason and time, and the rest of the report is still produced."""

import textwrap
import time
from dataclasses import replace

import pytest
from conftest import report_json, run_doctor, statuses
from factories import make_facts, recorded_baseline, run_check
from paddle_doctor.judge.findings import Finding, Status
from paddle_doctor.judge.registry import Check
from paddle_doctor.judge.rules import load_rules
from paddle_doctor.judge.runner import run_checks


def check_of(run, rules=("PD-CPU-010",), timeout=5.0, name="probe"):
    return Check(name=name, rules=rules, run=run, timeout=timeout)


def hang(facts):
    time.sleep(10)
    return []


def explode(facts):
    raise KeyError("cgroup")


def test_a_raising_check_becomes_an_error_and_others_still_run():
    good = check_of(lambda facts: [Finding("PD-CPU-011", Status.PASS, "fine")], rules=("PD-CPU-011",), name="good")
    results = run_checks([check_of(explode), good], make_facts(), load_rules())
    (error,) = results[0].findings
    assert error.status == Status.ERROR and "raised KeyError" in error.message and "after" in error.message
    assert results[1].findings[0].status == Status.PASS


def test_a_check_past_its_timeout_becomes_an_error_with_the_time_taken():
    start = time.perf_counter()
    (result,) = run_checks([check_of(hang, timeout=0.2)], make_facts(), load_rules())
    assert time.perf_counter() - start < 2
    assert result.findings[0].status == Status.ERROR
    assert "0.2 s timeout" in result.findings[0].message
    assert result.findings[0].evidence["seconds"] >= 0.2


def test_a_check_emitting_an_undeclared_rule_is_an_error():
    (result,) = run_checks([check_of(lambda facts: [Finding("PD-CPU-001", Status.FAIL, "x")])], make_facts(), load_rules())
    assert result.findings[0].status == Status.ERROR and "does not declare" in result.findings[0].message


def test_a_check_declaring_an_unknown_rule_is_an_error():
    (result,) = run_checks([check_of(lambda facts: [], rules=("PD-CPU-999",))], make_facts(), load_rules())
    assert result.findings[0].status == Status.ERROR and "not in" in result.findings[0].message


def install_plugin(site, module_source, entry="thirdparty = thirdparty_check:CHECK"):
    (site / "thirdparty_check.py").write_text(textwrap.dedent(module_source))
    dist = site / "thirdparty_check-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdparty-check\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[paddle_doctor.checks]\n{entry}\n")


def install_waiting_plugin(site, fifo):
    """A third-party check named ``waiting`` that never returns: it reads ``fifo``, which no one writes
    (the doctor's own readers refuse a FIFO; a plugin's code is not the doctor's)."""
    install_plugin(site, f'''
        """Plugin. Why: test. Fix: none."""
        from paddle_doctor.judge.registry import Check

        def wait(facts):
            open({str(fifo)!r}).read()

        CHECK = Check(name="waiting", rules=("PD-PADDLE-001",), run=wait)
    ''')


def test_third_party_check_registers_through_the_entry_point_group(tmp_path):
    install_plugin(tmp_path, '''
        """A site check: warns when the image forgot OMP_NUM_THREADS. Why: see PD-CPU-013. Fix: set it."""
        from paddle_doctor.judge.findings import Finding, Status
        from paddle_doctor.judge.registry import Check

        def run(facts):
            status = Status.FAIL if "OMP_NUM_THREADS" not in facts.env else Status.PASS
            return [Finding("PD-CPU-013", status, "site policy: OMP_NUM_THREADS must be set")]

        CHECK = Check(name="site_omp_policy", rules=("PD-CPU-013",), run=run)
    ''')
    result = run_doctor("--json", "--no-paddle", env={"PYTHONPATH": str(tmp_path)})
    report = report_json(result)
    mine = [f for f in report["findings"] if f["check"] == "site_omp_policy"]
    assert len(mine) == 1 and mine[0]["message"] == "site policy: OMP_NUM_THREADS must be set"


def test_a_broken_third_party_entry_point_is_reported_and_the_report_goes_on(tmp_path):
    install_plugin(tmp_path, "raise ImportError('needs a module that is not here')\n")
    result = run_doctor("--json", "--no-paddle", env={"PYTHONPATH": str(tmp_path)})
    report = report_json(result)
    assert report["check_errors"][0]["entry_point"] == "thirdparty = thirdparty_check:CHECK"
    assert "needs a module" in report["check_errors"][0]["reason"]
    assert statuses(report)["PD-CPU-001"] in ("pass", "fail", "warn", "skip")
    assert result.returncode == 1


@pytest.mark.parametrize("args, named", [
    (("--no-paddle",), "check could not be loaded: thirdparty = thirdparty_check:CHECK: "),
    (("--no-paddle", "--format", "junit"), 'name="thirdparty = thirdparty_check:CHECK"'),
    (("--no-paddle", "--format", "sarif"), '"text": "check could not be loaded: thirdparty = thirdparty_check:CHECK: '),
    (("healthcheck", "--json"), '"entry_point": "thirdparty = thirdparty_check:CHECK"'),
])
def test_a_broken_third_party_entry_point_is_named_in_every_output(tmp_path, args, named):
    install_plugin(tmp_path, "raise ImportError('needs a module that is not here')\n")
    result = run_doctor(*args, env={"PYTHONPATH": str(tmp_path), "COLUMNS": "250"})
    assert result.returncode == 1, result.stderr[-500:]
    assert named in result.stdout and "needs a module that is not here" in result.stdout, result.stdout[-2000:]



SERVICES = [dict(), dict(threads=4, concurrency=8, instances=2, layout="clone"), dict(device="gpu", precision="fp16"),
            dict(device="gpu", model="/models/m", tensorrt=dict(enabled=True, use_static=True, dynamic_shape_file="/m/s.pbtxt")),
            dict(model="/models/m", onednn=False, ir_optim=False, warmup_runs=0, onednn_cache_capacity=0)]


def unmeasured_facts():
    """Facts as the probes alone give them (no verification, no graph), over services and machines
    that take the checks down different paths."""
    from paddle_doctor.base.vocabulary import ProcessRole
    from paddle_doctor.facts import DeployedProcess, GpuDevice, GpuFacts, TensorRTSettings, TrtCacheFacts

    for service in SERVICES:
        service = dict(service)
        trt, model = service.pop("tensorrt", None), service.pop("model", None)
        for gpu in (False, True):
            facts = make_facts(throttled=(1000, 400), quota=2.0, **service)
            facts = replace(facts, service=replace(facts.service, model=model))
            if not service:  # a service of two workers read from /proc, in a container with a memory limit
                workers = [DeployedProcess(pid, ProcessRole.WORKER, rss_bytes=1 << 30) for pid in (8, 9)]
                facts = replace(facts, service_process=replace(facts.service_process, processes=workers),
                                memory=replace(facts.memory, limit_bytes=4 << 30))
            if trt:
                facts = replace(facts, service=replace(facts.service, tensorrt=TensorRTSettings(**trt)),
                                trt_cache=TrtCacheFacts(status="probed", directory="/models/m/_opt_cache", source="model", exists=True,
                                                        engines=["trt_serialized_1"], checked_path="/models/m/_opt_cache", mode=0o755,
                                                        stamp={"tensorrt": "8.5.1", "gpu": "Tesla T4", "compute_capability": "7.5"},
                                                        shape_file="/m/s.pbtxt", shape_file_exists=False))
            if gpu:
                facts = replace(facts, paddle=replace(facts.paddle, with_cuda=True, cuda_version="12.6", cuda_archs=[80],
                                                      cudnn_version="9.0", trt_compile_version=[8, 6, 1]),
                                gpu=GpuFacts(status="ok", driver_version="470.57.02", cuda_driver_version="11.4",
                                             devices=[GpuDevice(index=0, name="Tesla T4", compute_capability="7.5",
                                                                memory_total_bytes=16 << 30, memory_free_bytes=1 << 30)]))
            yield facts


def outcomes_without_a_measurement(check) -> set[str]:
    """What the check says, through the runner, where the healthcheck runs it: the probes and a baseline."""
    from paddle_doctor.facts.baseline import BaselineCache, BaselineGpu

    gpu = BaselineGpu("535.104.05", ["/dev/nvidia0"], None, [], None)
    cache = BaselineCache("/cache/paddle", exists=True, files=3, engines=2, mountpoint="/cache", fstype="ext4")
    outcomes = set()
    for facts in unmeasured_facts():
        facts = replace(facts, baseline=recorded_baseline(gpu=gpu, cache=cache))
        outcomes |= {finding.status.value for finding in run_check(check, facts)}
    return outcomes



def test_fast_checks_judge_probed_facts_and_the_others_only_measurements():
    """The healthcheck runs only fast checks, and without a model: a check marked slow must have
    nothing but skips to say without a measurement, and a fast one must have something to say."""
    from paddle_doctor.judge.registry import discover_checks

    checks, failures = discover_checks()
    assert not failures
    outcomes = {check.name: outcomes_without_a_measurement(check) for check in checks}
    wrong = {check.name: sorted(outcomes[check.name]) for check in checks
             if (outcomes[check.name] == {"skip"}) == check.fast}
    assert not wrong, f"fast flag does not match what the check can say without a measurement: {wrong}"
    assert sum(check.fast for check in checks) >= 15 and sum(not check.fast for check in checks) >= 5
