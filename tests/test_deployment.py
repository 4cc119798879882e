"""The service is a process tree: from any PID of it (or with no flags, the one deployment of processes with
Paddle mapped), the doctor finds the master and its workers (the same parent and program: gunicorn's
prefork, multiprocessing's spawned children, workers under an init that runs another program), reads each
worker's threads, memory and own record, and refuses to pick among unrelated services. On recorded /proc
trees (tests/fixtures/processes/gunicorn-service: a gunicorn master 7 that maps no Paddle and its workers
8 and 9, each with Paddle mapped and 5 threads, on a 2-CPU quota)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, report_json, run_doctor, statuses
from paddle_doctor.base.serde import to_data
from paddle_doctor.base.vocabulary import BuiltBy, Device
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.recorded import BuildSite, Frame, ModelFiles, Record, RecordedConfig, RecordedPredictor, RunStats
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.probes.process import open_service_process
from record_files import owned_by

PROCESSES = FIXTURES / "processes"
GUNICORN = PROCESSES / "gunicorn-service"
NO_PROBES = ("--no-paddle", "--no-gpu")
TICKS = {8: 120500, 9: 120501}  # field 22 of each worker's /proc/PID/stat in the tree
SPAWN_ARGV = ["/usr/local/bin/python3.10", "-c", "from multiprocessing.spawn import spawn_main; spawn_main(tracker_fd=5, pipe_handle=7)",
              "--multiprocessing-fork"]


def tree(tmp_path: Path, source: Path = GUNICORN) -> Path:
    root = tmp_path / "root"
    shutil.copytree(source, root, symlinks=True)
    return root


def set_argv(root: Path, pid: int, argv: list[str]) -> None:
    (root / "proc" / str(pid) / "cmdline").write_bytes("\0".join(argv).encode() + b"\0")


def set_parent(root: Path, pid: int, parent: int) -> None:
    stat = root / "proc" / str(pid) / "stat"
    head, _, rest = stat.read_text().partition(") ")
    fields = rest.split(" ")
    fields[1] = str(parent)
    stat.write_text(f"{head}) {' '.join(fields)}")


def add_process(root: Path, pid: int, like: int, parent: int, argv: list[str], ticks: int) -> None:
    """Process ``pid``, a copy of ``like`` (its maps, threads, memory) with its own parent, command line and start time."""
    shutil.copytree(root / "proc" / str(like), root / "proc" / str(pid), symlinks=True)
    set_argv(root, pid, argv)
    stat = root / "proc" / str(pid) / "stat"
    fields = stat.read_text().partition(") ")[2].split(" ")
    fields[1], fields[19] = str(parent), str(ticks)
    stat.write_text(f"{pid} (python3) {' '.join(fields)}")


def worker_record(pid: int, threads: int, predictors: int = 1) -> Record:
    set_at = Frame("/srv/app.py", 9, "build")
    built = [RecordedPredictor(number, BuiltBy.CREATE_PREDICTOR, RecordedConfig(PredictorConfig(threads=threads, onednn=True), Device.CPU),
                               ModelFiles(None, "/models/cnn/inference.json", "/models/cnn/inference.pdiparams"),
                               BuildSite(set_at, set_at, set_at), RunStats(12, 30.0, 5.0, 6.0, 7.0, 0.1, 1.0, None, 1, [], 0))
             for number in range(predictors)]
    return Record(pid, TICKS[pid], ["gunicorn", "--workers", "2", "app:app"], "3.3.1", "0.1.0", 1.0, built, 0, 1, threads, [])


def with_records(root: Path, threads: dict[int, int]) -> Path:
    """The tree with each worker's own record, in its user's default folder, as its recorder leaves it."""
    folder = root / "tmp" / "paddle-doctor-record-1000"
    folder.mkdir(parents=True)
    for pid, count in threads.items():
        (folder / f"{pid}-{TICKS[pid]}.json").write_text(json.dumps(to_data(worker_record(pid, count))))
    owned_by(1000, folder)
    return root


def processes_of(root: Path, pid: int | None) -> tuple[int | None, list[tuple[int, str]]]:
    facts, _ = open_service_process(ProbeContext(root), pid)
    return facts.pid, [(process.pid, process.role.value) for process in facts.processes]


DEPLOYMENT = [(7, "master"), (8, "worker"), (9, "worker")]


@pytest.mark.parametrize("pid, read", [(None, 8), (7, 8), (8, 8), (9, 9)])
def test_any_pid_of_a_gunicorn_service_or_none_finds_its_master_and_workers(pid, read):
    assert processes_of(GUNICORN, pid) == (read, DEPLOYMENT)


def test_each_process_of_the_deployment_says_its_threads_memory_and_paddle_with_their_files():
    facts, _ = open_service_process(ProbeContext(GUNICORN), 7)
    master, first, second = facts.processes
    assert (master.maps_paddle, master.threads, master.rss_bytes, master.program) == (False, 1, 40960 * 1024, "gunicorn")
    assert (first.maps_paddle, first.threads, first.rss_bytes, first.parent) == (True, 5, 921600 * 1024, 7)
    assert (second.threads, second.rss_bytes, second.rss_source, second.threads_source) == (5, 937984 * 1024, "/proc/9/status", "/proc/9/task")
    assert facts.chosen_because == "a worker of the master 7 named with --pid (gunicorn: master 7 and 2 workers (8, 9))"


def test_a_worker_still_starting_without_paddle_is_a_worker_of_its_master(tmp_path):
    root = tree(tmp_path)
    add_process(root, 10, 7, 7, (root / "proc" / "7" / "cmdline").read_text().rstrip("\0").split("\0"), 130000)
    assert processes_of(root, None)[1] == [*DEPLOYMENT, (10, "worker")]  # the master's child of the workers' program


def test_spawned_workers_are_the_workers_of_the_master_that_spawned_them_and_its_other_children_are_not(tmp_path):
    root = tree(tmp_path)
    set_argv(root, 7, ["/usr/local/bin/python3.10", "/usr/local/bin/uvicorn", "app:app", "--workers", "2"])
    for worker in (8, 9):
        set_argv(root, worker, SPAWN_ARGV)
    add_process(root, 12, 7, 7, ["/usr/local/bin/python3.10", "-c", "from multiprocessing.resource_tracker import main;main(4)"], 120400)
    (root / "proc" / "12" / "maps").write_text("")  # the resource tracker maps no Paddle
    facts, _ = open_service_process(ProbeContext(root), None)
    assert [(process.pid, process.role.value) for process in facts.processes] == DEPLOYMENT
    assert facts.deployment.startswith("uvicorn: master 7 and 2 workers (8, 9)")


def test_workers_under_an_init_that_runs_another_program_have_no_master(tmp_path):
    root = tree(tmp_path)
    (root / "proc" / "7" / "exe").unlink()
    (root / "proc" / "7" / "exe").symlink_to("/usr/bin/tini")
    set_argv(root, 7, ["/usr/bin/tini", "--", "python3", "worker.py"])
    for worker in (8, 9):
        set_argv(root, worker, ["python3", "worker.py"])
    assert processes_of(root, None) == (8, [(8, "worker"), (9, "worker")])


def test_unrelated_services_with_no_pid_are_a_usage_error_in_one_line():
    result = run_doctor("--root", str(PROCESSES / "two-services"), "--pid", "auto", "--json", *NO_PROBES)
    assert result.returncode == 2 and not result.stdout
    assert result.stderr.splitlines() == [("paddle-doctor: error: 2 unrelated services have Paddle mapped, each a parent and "
                                           "program of its own (detect.py: process 10; classify.py: process 11); choose one with --pid")]


def test_a_gunicorn_service_beside_an_unrelated_one_is_refused_with_no_pid_and_read_with_one(tmp_path):
    root = tree(tmp_path)
    add_process(root, 20, 8, 1, ["python3", "/srv/batch.py"], 140000)
    refused = run_doctor("--root", str(root), "--pid", "auto", "--json", *NO_PROBES)
    assert refused.returncode == 2 and not refused.stdout
    assert "2 unrelated services have Paddle mapped" in refused.stderr
    assert "gunicorn: master 7 and 2 workers (8, 9); batch.py: process 20" in refused.stderr
    assert processes_of(root, 9) == (9, DEPLOYMENT)
    assert processes_of(root, 20) == (20, [(20, "worker")])


def test_each_workers_own_record_is_read_with_its_predictors_and_threads(tmp_path):
    root = with_records(tree(tmp_path), {8: 4, 9: 4})
    result = run_doctor("--root", str(root), "--pid", "7", "--json", *NO_PROBES)
    service = report_json(result)["service"]
    rows = {row["pid"]: row for row in service["processes"]}
    assert rows[8]["record"] == "/tmp/paddle-doctor-record-1000/8-120500.json"
    assert rows[9]["record"] == "/tmp/paddle-doctor-record-1000/9-120501.json"
    assert [(rows[pid]["predictors"], rows[pid]["math_threads"]) for pid in (8, 9)] == [(1, 4), (1, 4)]
    assert rows[7]["record"] is None and "no record of process 7" in rows[7]["record_reason"]
    assert service["process"]["pid"] == 8 and service["record"].startswith("/tmp/paddle-doctor-record-1000/8-120500.json")
    assert ("paddle-doctor: the service runs gunicorn: master 7 and 2 workers (8, 9): the processes with Paddle mapped of one program "
            "under its master (/proc/7/cmdline and the workers' /proc/PID/stat); the records of its workers: "
            "8 (1 predictor, 4 math threads at once), 9 (1 predictor, 4 math threads at once)") in result.stderr.splitlines()


def test_a_record_planted_by_another_user_is_not_a_workers_record(tmp_path):
    root = with_records(tree(tmp_path), {8: 4, 9: 4})
    owned_by(0, root / "tmp" / "paddle-doctor-record-1000")  # a folder of root's, not the service user's
    rows = {row["pid"]: row for row in report_json(run_doctor("--root", str(root), "--pid", "8", "--json", *NO_PROBES))["service"]["processes"]}
    assert rows[9]["record"] is None and "no user but the service's (uid 1000)" in rows[9]["record_reason"]


def test_a_process_alone_is_its_own_one_worker():
    facts, _ = open_service_process(ProbeContext(PROCESSES / "one-service"), None)
    assert [(process.pid, process.role.value) for process in facts.processes] == [(4242, "worker")]
    assert facts.deployment == "app.py: process 4242, alone: no other process of its parent runs its program"


def test_the_facts_of_a_deployment_read_back_the_same(tmp_path):
    root = with_records(tree(tmp_path), {8: 4, 9: 2})
    facts = tmp_path / "facts.json"
    assert run_doctor("facts", "--root", str(root), "--pid", "9", "-o", str(facts), *NO_PROBES).returncode == 0
    replay = report_json(run_doctor("check", "--facts", str(facts), "--json"))
    assert [(row["pid"], row["math_threads"]) for row in replay["service"]["processes"]] == [(7, None), (8, 4), (9, 2)]
    assert set(statuses(replay)) >= {"PD-CPU-010", "PD-CPU-014"}


def test_several_workers_on_every_cpu_are_not_a_single_instance():
    report = report_json(run_doctor("--root", str(GUNICORN), "--pid", "8", "--json", *NO_PROBES))
    binding = next(finding for finding in report["findings"] if finding["rule_id"] == "PD-CPU-014")
    assert binding["status"] == "fail"
    assert binding["message"] == "2 worker processes (8, 9) and every thread may run on any of the 8 CPUs"


def memory_finding(root: Path, pid: str = "7") -> dict:
    report = report_json(run_doctor("--root", str(root), "--pid", pid, "--json", *NO_PROBES))
    return next(finding for finding in report["findings"] if finding["rule_id"] == "PD-MEM-003")


def test_the_workers_resident_memory_together_is_judged_against_the_memory_limit(tmp_path):
    fits = memory_finding(GUNICORN)
    assert fits["status"] == "pass"
    assert fits["message"] == ("3 processes (2 workers) hold 1.8 GiB resident (40.0 MiB + 900.0 MiB + 916.0 MiB) of the 4.0 GiB "
                               "memory limit; the cgroup counts 700.0 MiB, the pages they share once")
    root = tree(tmp_path)
    memory = root / "sys" / "fs" / "cgroup" / "memory"
    (memory / "memory.limit_in_bytes").write_text(f"{2 * 1024 ** 3}\n")
    shared = memory_finding(root)  # their resident memory adds up past the limit's share, but the pages are shared
    assert shared["status"] == "pass" and "the cgroup counts 700.0 MiB" in shared["message"]
    (memory / "memory.usage_in_bytes").write_text(f"{1950 * 1024 ** 2}\n")
    full = memory_finding(root)
    assert full["status"] == "fail" and "of the 2.0 GiB memory limit" in full["message"]
    assert full["evidence"]["workers_that_fit"] == 1 and full["evidence"]["pids"] == [7, 8, 9]
    assert "gunicorn --workers 1 --preload app:app" in json.dumps(full)


def budget_findings(root: Path, *args: str) -> dict[str, dict]:
    report = report_json(run_doctor("--root", str(root), *args, "--json", *NO_PROBES))
    return {finding["rule_id"]: finding for finding in report["findings"] if finding["rule_id"] in ("PD-CPU-010", "PD-CPU-011")}


@pytest.mark.parametrize("threads, said", [
    ({8: 4, 9: 4}, "8 threads (2 workers × 4)"),
    ({8: 2, 9: 2}, "4 threads (2 workers × 2)"),
    ({8: 4, 9: 2}, "6 threads (2 workers: 4 + 2)"),
])
@pytest.mark.parametrize("pid", ["7", "8", "9"])
def test_the_threads_of_every_recorded_worker_are_judged_against_the_budget_from_any_pid(tmp_path, threads, said, pid):
    over = budget_findings(with_records(tree(tmp_path), threads), "--pid", pid)["PD-CPU-010"]
    assert over["status"] == "fail"
    assert over["message"] == f"{said} on a budget of 2 CPUs (cgroup quota 200000/100000 µs)"
    assert over["observed"].startswith(f"{said} in workers 8, 9, each as its own record or busy threads say")
    assert (over["evidence"]["instances"], over["evidence"]["total_threads"]) == (2, sum(threads.values()))
    assert over["evidence"]["threads_per_instance"] == 1  # the budget divided among the workers: 1 thread each


def test_with_no_flags_the_one_deployment_is_judged_whole(tmp_path):
    over = budget_findings(with_records(tree(tmp_path), {8: 4, 9: 4}), "--pid", "auto")["PD-CPU-010"]
    assert over["message"] == "8 threads (2 workers × 4) on a budget of 2 CPUs (cgroup quota 200000/100000 µs)"


def test_the_instances_a_flag_says_are_judged_instead_of_the_workers_found(tmp_path):
    found = budget_findings(with_records(tree(tmp_path), {8: 4, 9: 4}), "--pid", "8", "--instances", "1", "--threads", "2")
    assert found["PD-CPU-010"]["status"] == "pass" and found["PD-CPU-010"]["message"].startswith("2 compute threads fit")


@pytest.mark.parametrize("form", ["text", "markdown", "html"])
def test_every_report_for_people_shows_the_deployment_a_line_per_process(tmp_path, form):
    root = with_records(tree(tmp_path), {8: 4, 9: 2})
    shown = run_doctor("--root", str(root), "--pid", "7", "--format", form, *NO_PROBES, env={"COLUMNS": "400"}).stdout
    assert "deployment: gunicorn: master 7 and 2 workers (8, 9): the processes with Paddle mapped of one program" in shown
    assert "master 7: 1 thread, RSS 40.0 MiB, no Paddle mapped" in shown and "no record of process 7" not in shown
    assert "worker 8: 5 threads, RSS 900.0 MiB; 1 predictor, 4 math threads at once (record /tmp/paddle-doctor-record-1000/8-120500.json)" in shown
    assert "worker 9: 5 threads, RSS 916.0 MiB; 1 predictor, 2 math threads at once (record /tmp/paddle-doctor-record-1000/9-120501.json)" in shown


def test_a_process_alone_shows_no_deployment_lines():
    shown = run_doctor("--root", str(PROCESSES / "one-service"), "--pid", "4242", *NO_PROBES, env={"COLUMNS": "400"}).stdout
    assert "Service" in shown and "deployment:" not in shown and "worker 4242" not in shown


def test_without_a_record_or_a_thread_count_each_workers_busy_threads_are_added_up(tmp_path):
    """Each worker's own busy threads (a live sample, here replayed from facts) stand in for the thread count
    no record nor source gives: 3 + 2 on 2 CPUs is over the budget."""
    path = tmp_path / "facts.json"
    assert run_doctor("facts", "--root", str(GUNICORN), "--pid", "7", "-o", str(path), *NO_PROBES).returncode == 0
    facts = json.loads(path.read_text())
    process = facts["service_process"]
    for row, busy in zip(process["processes"][1:], (3, 2)):
        row["busy_threads"] = busy
    process["busy_threads"], process["sample_s"] = 3, 1.0
    path.write_text(json.dumps(facts))
    over = budget_findings(path.parent, "--facts", str(path))["PD-CPU-010"]
    assert over["status"] == "fail" and over["message"] == "5 threads (2 workers: 3 + 2) on a budget of 2 CPUs (cgroup quota 200000/100000 µs)"


@pytest.mark.parametrize("argv, named", [
    (["/usr/local/bin/python3.10", "-m", ""], "-m (no module)"),
    (["/usr/local/bin/python3.10", "-m", " "], "-m (no module)"),
    (["/usr/local/bin/python3.10", "-W", "ignore", "/srv/serve.py"], "serve.py"),
    (["/usr/local/bin/python3.10", "-X", "importtime", "-m", "pkg.server"], "-m pkg.server"),
    (["/usr/local/bin/python3.10", "-c", "import app"], "-c CODE"),
])
def test_a_workers_command_line_names_its_program_past_the_interpreters_options(tmp_path, argv, named):
    """A command line is the service's to write (setproctitle rewrites it): an empty module is no crash, and an
    option's value (-W ignore) is not taken for the script."""
    root = tree(tmp_path)
    for pid in (7, 8, 9):
        set_argv(root, pid, argv)
    facts, _ = open_service_process(ProbeContext(root), 8)
    assert facts.deployment.startswith(f"{named}: master 7 and 2 workers (8, 9)"), facts.deployment


def test_a_supervisor_in_python_is_no_master_of_the_services_it_starts(tmp_path):
    """supervisord (a Python program) starting two services of its own, each mapping Paddle: two services, not one
    deployment of two workers, from the supervisor's PID as with no flags."""
    root = tree(tmp_path)
    set_argv(root, 7, ["/usr/local/bin/python3.10", "/usr/local/bin/supervisord", "-n"])
    set_argv(root, 8, ["/usr/local/bin/python3.10", "/srv/ocr_service.py"])
    set_argv(root, 9, ["/usr/local/bin/python3.10", "/srv/det_service.py"])
    refused = run_doctor("--root", str(root), "--pid", "auto", "--json", *NO_PROBES)
    assert refused.returncode == 2 and "2 unrelated services have Paddle mapped" in refused.stderr, refused.stderr
    assert "master 7" not in refused.stderr and "ocr_service.py: process 8" in refused.stderr
    assert processes_of(root, 8) == (8, [(8, "worker")])
