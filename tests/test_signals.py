"""A stop signal (SIGTERM, SIGINT, SIGHUP) ends the doctor in every phase, promptly, with the report
of the phases that finished and one true line naming the signal and the phase it stopped; no
process of the doctor's is left behind. The signals are real, sent to a real doctor once it says
(``-v``) it has reached the phase; the healthcheck is stopped while a third-party check it runs
reads a FIFO nobody writes (the doctor's own readers refuse FIFOs; a plugin's code can still hang)."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jsonschema
import pytest
from conftest import fixture_root, statuses
from gpu_helpers import fake_nvml_env
from machine import usable_cpus
from paddle_doctor.base import children
from process_tree import RunningDoctor
from test_registry import install_waiting_plugin

pytestmark = pytest.mark.timing  # judges live timings: .ci/run runs these again on the machine as it is

STOP_SIGNALS = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
PROMPT_S = 10.0  # a stop signal ends the doctor within this, whatever it was waiting for
ENDED = "every child process was ended"
ROOT = fixture_root("intel-avx512-v2-max")


def slow_python(tmp_path):
    """An interpreter whose Paddle import never ends: the doctor's Paddle probe waits for it. It says
    (a file) when it has started, so the test knows the probe is waiting."""
    started = tmp_path / "started"
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\necho $$ > {started}\nexec sleep 120\n")
    script.chmod(0o755)
    return script, started


def wait_for_file(path, doctor: RunningDoctor, timeout: float = 60.0) -> None:
    """Until ``path`` exists: what the slow interpreter writes once it runs."""
    done = threading.Event()
    deadline = threading.Timer(timeout, done.set)
    deadline.start()
    try:
        while not path.exists() and not done.is_set():
            assert doctor.proc.poll() is None, doctor.stderr_lines
            done.wait(0.05)
    finally:
        deadline.cancel()
    assert path.exists(), f"the Paddle probe did not start within {timeout:g} s"


@contextmanager
def opened_by_the_doctor(fifo: Path, timeout: float = 60.0) -> Iterator[None]:
    """Until the doctor has opened ``fifo`` to read it (our end, opened for writing, returns then);
    nothing is written, so the doctor's read waits. Fails, unblocked, when it does not within ``timeout``."""
    writer: list[int] = []
    opening = threading.Thread(target=lambda: writer.append(os.open(fifo, os.O_WRONLY)), daemon=True)
    opening.start()
    opening.join(timeout)
    if not writer:
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # lets our own open return
        opening.join(5)
        os.close(writer[0]) if writer else None
        raise AssertionError(f"the doctor did not open {fifo} within {timeout:g} s")
    try:
        yield
    finally:
        os.close(writer[0])


def test_a_stop_signal_while_the_gpu_probe_s_thread_waits_for_a_hung_nvml_ends_the_doctor(tmp_path):
    """The GPU probe waits for its NVML child in a thread of its own while the others read: a wedged
    driver (nvmlInit never returns) holds neither the stop nor the exit, and the child is ended too."""
    hanging = tmp_path / "hanging"
    scenario = tmp_path / "hang.json"
    scenario.write_text(json.dumps({"init": "hang", "hanging": str(hanging)}))
    with RunningDoctor("-v", "--root", str(ROOT), "--gpu", "--no-paddle", "--json", env=fake_nvml_env(scenario)) as doctor:
        doctor.wait_for("paddle-doctor: probing the container")
        wait_for_file(hanging, doctor)
        child = int(hanging.read_text())
        code, took, left = doctor.stop(signal.SIGTERM)
    assert code == 2 and took < PROMPT_S, (code, took, doctor.stderr_lines)
    assert doctor.last_line == (f"paddle-doctor: stopped by SIGTERM while probing the container, before anything "
                                f"was printed (exit 2); {ENDED}")
    assert doctor.stdout == "" and not any("Traceback" in line for line in doctor.stderr_lines)
    assert child in doctor.tree_at_signal, "the NVML child was not the doctor's"
    assert not left, f"processes of the doctor's tree survived it: {left}"


@pytest.mark.parametrize("stop", STOP_SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_while_a_probe_waits_ends_the_doctor_and_the_probe_s_child(tmp_path, stop):
    python, started = slow_python(tmp_path)
    with RunningDoctor("-v", "--root", str(ROOT), "--python", str(python), "--no-gpu", "--json") as doctor:
        doctor.wait_for("paddle-doctor: probing the container")
        wait_for_file(started, doctor)
        child = int(started.read_text())
        code, took, left = doctor.stop(stop)
    assert code == 2 and took < PROMPT_S, (code, took, doctor.stderr_lines)
    assert doctor.last_line == (f"paddle-doctor: stopped by {stop.name} while probing the container, before anything "
                                f"was printed (exit 2); {ENDED}")
    assert doctor.stdout == "" and not any("Traceback" in line for line in doctor.stderr_lines)
    assert child in doctor.tree_at_signal, "the probe's child was not the doctor's"
    assert not left, f"processes of the doctor's tree survived it: {left}"


def stop_a_model_run(models, stop: signal.Signals, phase: str, report_schema) -> tuple[RunningDoctor, dict]:
    """The doctor diagnosing the small CNN, stopped by ``stop`` once it says it has begun ``phase``:
    it ends promptly, exit 2, leaving no process, with a valid report saying exit 2 and the probe findings."""
    with RunningDoctor("-v", "--json", "--model", str(models["cnn-pir"]), "--threads", "8", "--pid", "none",
                       "--budget", "30") as doctor:
        doctor.wait_for(f"paddle-doctor: {phase}")
        code, took, left = doctor.stop(stop)
    assert code == 2 and took < PROMPT_S, (code, took, doctor.stderr_lines)
    assert not left, f"processes of the doctor's tree survived it: {left}"
    assert not any("Traceback" in line for line in doctor.stderr_lines)
    report = json.loads(doctor.stdout)
    jsonschema.validate(report, report_schema)
    assert report["exit_code"] == 2  # the report says what the doctor exits with
    assert statuses(report)["PD-CPU-010"] == "fail"  # the probe findings are all there
    return doctor, report


@pytest.mark.slow
@pytest.mark.parametrize("stop", STOP_SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_during_graph_coverage_keeps_the_probe_findings(models, stop, report_schema):
    doctor, report = stop_a_model_run(models, stop, "reading the graph coverage", report_schema)
    assert doctor.last_line == (f"paddle-doctor: stopped by {stop.name} while reading the graph coverage: what is printed "
                                f"is what finished before it (probing the container); exit 2; {ENDED}")
    assert report["verification"] is None and report["graph"] is None
    said = {f["rule_id"]: f["message"] for f in report["findings"] if f["rule_id"] in ("PD-GRAPH-003", "PD-CFG-001")}
    assert said == {"PD-GRAPH-003": f"not read: the doctor was stopped by {stop.name} before reading the graph coverage finished",
                    "PD-CFG-001": f"not measured: the doctor was stopped by {stop.name} before measuring finished"}


@pytest.mark.slow
@pytest.mark.parametrize("stop", STOP_SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_while_measuring_prints_the_partial_report_and_leaves_no_process(models, stop, report_schema):
    # measuring onednn, the first experiment: the service's configuration is loaded and experiments run
    doctor, report = stop_a_model_run(models, stop, "measuring onednn", report_schema)
    assert doctor.last_line == (f"paddle-doctor: stopped by {stop.name} while measuring onednn: what is printed is what "
                                f"finished before it (probing the container, reading the graph coverage); exit 2; {ENDED}")
    verification = report["verification"]
    assert verification["error"].startswith(f"interrupted by {stop.name}: measuring stopped during onednn; not run: bf16, threads")
    (interrupted,) = verification["experiments"]
    assert interrupted["name"] == "onednn" and interrupted["status"] == "error"
    # the service's configuration, or (the switches are measured within the CPU budget) the same at the budget's threads
    within = min(8, max(1, int(usable_cpus())))
    assert interrupted["reason"].startswith(tuple(f"interrupted by {stop.name} (configuration: threads={n}," for n in (8, within)))
    assert report["graph"]["ops"] > 0  # and graph coverage, which finished


def stop_a_waiting_healthcheck(tmp_path, stop: signal.Signals, *args: str) -> tuple[RunningDoctor, int, float, set[int]]:
    """The healthcheck stopped by ``stop`` once a third-party check it runs waits on a FIFO nobody
    writes; the doctor, its exit code, the seconds it took to end and what it left alive."""
    never = tmp_path / "never-written"
    os.mkfifo(never)
    install_waiting_plugin(tmp_path, never)
    with RunningDoctor("healthcheck", "--root", str(ROOT), "--budget", "60", *args,
                       env={"PYTHONPATH": str(tmp_path)}) as doctor, opened_by_the_doctor(never):
        code, took, left = doctor.stop(stop)
    return doctor, code, took, left


@pytest.mark.parametrize("stop", STOP_SIGNALS, ids=lambda s: s.name)
def test_a_stop_signal_is_the_healthcheck_s_one_line_and_exit_1(tmp_path, stop):
    doctor, code, took, left = stop_a_waiting_healthcheck(tmp_path, stop)
    assert code == 1 and took < PROMPT_S, (code, took, doctor.stdout, doctor.stderr_lines)
    assert doctor.stdout == f"unhealthy: stopped by {stop.name} before it finished (still running check waiting)\n"
    assert doctor.stderr_lines == [] and not left


def test_a_stopped_healthcheck_s_detail_names_the_signal(tmp_path):
    doctor, code, _, _ = stop_a_waiting_healthcheck(tmp_path, signal.SIGTERM, "--json")
    detail = json.loads(doctor.stdout)
    assert code == 1 and detail["healthy"] is False and detail["stopped_by"] == "SIGTERM"
    assert detail["unfinished"] == ["running check waiting"]
    finished, checks_run = detail["finished"][:3], detail["finished"][3:]
    assert finished == ["reading the service settings", "probing the container", "loading the checks"]
    assert all(step.startswith("running check ") for step in checks_run) and "running check waiting" not in checks_run


# ------------------------------------------------------------------ the signal path itself, in this process


def test_a_signal_in_a_phase_cuts_it_and_names_it():
    with children.handling_stop_signals():
        with children.phase("first"):
            pass
        with pytest.raises(children.Interrupted), children.phase("second"):
            os.kill(os.getpid(), signal.SIGTERM)
            threading.Event().wait(5)  # a wait the signal ends
        stop = children.stopped()
    assert (stop.signal_name, stop.phase, stop.finished, stop.deferred) == ("SIGTERM", "second", ["first"], False)
    assert stop.line(reported=True, exit_code=2) == ("stopped by SIGTERM while second: what is printed is what finished "
                                                     f"before it (first); exit 2; {ENDED}")


def test_a_deferred_phase_finishes_on_a_first_signal_and_a_second_one_cuts_it():
    with children.handling_stop_signals():
        with children.phase("writing", deferred=True):
            os.kill(os.getpid(), signal.SIGHUP)
            threading.Event().wait(0.2)  # not cut: the phase goes on
            finished_the_phase = True
        assert children.stopped().deferred and children.stopped().phase == "writing"
        with pytest.raises(children.Interrupted), children.phase("writing again", deferred=True):
            os.kill(os.getpid(), signal.SIGINT)
            threading.Event().wait(5)
    assert finished_the_phase
    assert children.stopped().line(reported=True, exit_code=1) == (
        f"SIGHUP arrived while writing; that was finished first, so the output is complete (exit 1); {ENDED}")


def test_a_signal_between_phases_lets_the_next_phase_not_begin():
    began = []
    with children.handling_stop_signals():
        with children.phase("first"):
            pass
        os.kill(os.getpid(), signal.SIGTERM)
        threading.Event().wait(0.2)  # not cut between phases: nothing there waits
        with pytest.raises(children.Interrupted), children.phase("second"):
            began.append("second")
    stop = children.stopped()
    assert not began and (stop.phase, stop.finished, stop.deferred) == ("moving on from first", ["first"], False)


def test_the_signal_handlers_are_given_back_after_a_command():
    before = [signal.getsignal(number) for number in children.STOP_SIGNALS]
    with children.handling_stop_signals():
        assert all(signal.getsignal(number) is not handler for number, handler in zip(children.STOP_SIGNALS, before))
    assert [signal.getsignal(number) for number in children.STOP_SIGNALS] == before
