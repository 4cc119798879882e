"""--pid: services started for real in the background (Python processes that import Paddle and
build a Config), found and read from /proc; processes without Paddle, that exit, that are zombies,
kernel threads or another user's; the automatic pick, on recorded /proc trees."""

import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, probe_process, report_json, report_with_its_exit, run_doctor, statuses
from paddle_doctor.base.serde import to_data
from paddle_doctor.probes.context import ProbeContext

SERVICES = FIXTURES / "services"
PROCESSES = FIXTURES / "processes"
NO_PROBES = ("--no-paddle", "--no-gpu")
SECRETS = ("hunter2-not-for-logs", "pa55word")
STARTUP_S = 180


def start(script, env=None, argv=None):
    """A service from tests/fixtures/services, run with this interpreter; returns once it printed ready."""
    full_env = {name: value for name, value in os.environ.items() if name != "INFER_THREADS"}
    full_env.update({"SERVICE_SECONDS": "600", **(env or {})})
    process = subprocess.Popen(argv or [sys.executable, str(SERVICES / script)], env=full_env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.strip() == "ready":
            return process
        if process.poll() is not None:
            break
    process.kill()
    pytest.fail(f"service {script} did not start")


@pytest.fixture(scope="module")
def services():
    started = {}
    try:
        started["env_helper"] = start("env_helper.py")
        started["env_helper_live"] = start("env_helper.py", {"INFER_THREADS": "3"})
        started["class_server"] = start("class_server.py")
        started["factory"] = start("factory.py")
        yield started
    finally:
        for process in started.values():
            process.kill()
            process.wait()


def service_section(result):
    return report_json(result)["service"]


def origins(report_service):
    return {setting["name"]: setting for setting in report_service["settings"]}


def test_the_service_is_read_from_its_pid_with_no_other_flag(services, report_schema):
    import jsonschema

    pid = services["env_helper"].pid
    result = run_doctor("--pid", str(pid), "--json", timeout=300)
    report = report_json(result)
    jsonschema.validate(report, report_schema)
    service = report["service"]
    threads = origins(service)["threads"]
    assert (threads["value"], threads["origin"]) == (6, "source")
    assert f"from INFER_THREADS (default 6, not set in /proc/{pid}/environ)" in threads["detail"]
    assert origins(service)["onednn"]["value"] is False
    process = service["process"]
    assert (process["status"], process["pid"], process["chosen_because"]) == ("probed", pid, "named with --pid")
    assert process["interpreter"] == sys.executable and process["interpreter_source"] == f"/proc/{pid}/cmdline"
    assert process["script"] == str(SERVICES / "env_helper.py")
    assert "paddle" in {library["kind"] for library in process["libraries"]}
    assert process["threads"] >= 1 and process["rss_bytes"] > 0 and process["sample_s"] >= 1.0
    assert report["host"]["python"] is not None, "the Paddle probe ran with the service's interpreter"
    (finding,) = [f for f in report["findings"] if f["rule_id"] == "PD-CPU-004"]  # the source decides oneDNN: its line is here
    assert finding["status"] == "fail" and finding["locations"] == [{"file": str(SERVICES / "env_helper.py"), "line": 10}]


def test_the_live_environment_value_is_the_services_setting(services):
    pid = services["env_helper_live"].pid
    service = service_section(run_doctor("--pid", str(pid), "--json", *NO_PROBES))
    threads = origins(service)["threads"]
    assert threads["value"] == 3
    assert f"from INFER_THREADS (default 6, live 3 in /proc/{pid}/environ)" in threads["detail"]
    assert service["process"]["environ"]["INFER_THREADS"] == "3"


def test_a_class_based_threaded_server_is_found_with_its_shared_predictor(services):
    result = run_doctor("--pid", str(services["class_server"].pid), "--json", *NO_PROBES)
    report = report_json(result)
    assert {name: s["value"] for name, s in origins(report["service"]).items()} == {"threads": 2, "ir_optim": False}
    assert statuses(report)["PD-SRC-005"] == "fail"
    # the source decides ir_optim: the check judging it reports the line, the lint rule names that check
    (judged,) = [f for f in report["findings"] if f["rule_id"] == "PD-GRAPH-001"]
    assert judged["status"] == "fail" and [loc["line"] for loc in judged["locations"]] == [12]
    assert statuses(report)["PD-SRC-002"] == "skip"


def test_a_factory_that_counts_the_hosts_cpus_is_not_guessed(services):
    report = report_json(run_doctor("--pid", str(services["factory"].pid), "--json", *NO_PROBES))
    threads = origins(report["service"])["threads"]
    assert threads["value"] is None and "os.cpu_count(), the host's CPUs" in threads["detail"]
    assert statuses(report)["PD-SRC-007"] == "fail"


def test_flags_and_config_beat_what_the_process_and_source_say(services, tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text("threads: 4\nonednn: true\n")
    pid = str(services["env_helper"].pid)
    service = service_section(run_doctor("--pid", pid, "--config", str(config), "--no-onednn", "--json", *NO_PROBES))
    assert {name: (s["value"], s["origin"]) for name, s in origins(service).items()} == {
        "threads": (4, "config"), "onednn": (False, "flag"), "memory_optim": (True, "source")}


def test_a_process_without_paddle_is_read_and_said_so():
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        result = run_doctor("--pid", str(sleeper.pid), "--json", *NO_PROBES)
        process = service_section(result)["process"]
    finally:
        sleeper.kill()
        sleeper.wait()
    assert process["status"] == "probed" and process["libraries"] == []
    assert process["reason"].startswith(f"process {sleeper.pid} has no Paddle library mapped")
    assert f"process {sleeper.pid} has no Paddle library mapped" in result.stderr


def test_busy_threads_count_the_threads_that_burn_cpu():
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        time.sleep(0.2)
        busy = probe_process(ProbeContext("/"), spinner.pid)
        idle = probe_process(ProbeContext("/"), sleeper.pid)
    finally:
        for process in (spinner, sleeper):
            process.kill()
            process.wait()
    assert (busy.threads, busy.busy_threads) == (1, 1)
    assert (idle.threads, idle.busy_threads) == (1, 0)


def test_a_pid_that_exits_while_it_is_read_is_one_clear_line():
    short = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(0.4)"],
                             stdout=subprocess.PIPE, text=True)
    assert short.stdout.readline().strip() == "up"
    reaper = threading.Thread(target=short.wait)
    reaper.start()
    facts = probe_process(ProbeContext("/"), short.pid)
    reaper.join()
    assert facts.status == "vanished"
    assert facts.reason.startswith(f"process {short.pid} does not exist or exited while it was read")


def test_a_pid_that_is_gone_leaves_the_rest_of_the_report():
    gone = subprocess.Popen(["true"])
    gone.wait()
    result = run_doctor("--pid", str(gone.pid), "--json", *NO_PROBES)
    report_with_its_exit(result)
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[0] == (f"paddle-doctor: process {gone.pid} does not exist or exited while it was read "
                                             f"(/proc/{gone.pid}/stat: No such file or directory)")
    assert service_section(result)["process"]["status"] == "vanished"
    assert report_json(result)["findings"], "the rest of the report is there"


def test_a_zombie_is_named_as_one():
    child = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and " Z " not in open(f"/proc/{child.pid}/stat").read():
            time.sleep(0.02)
        facts = probe_process(ProbeContext("/"), child.pid)
    finally:
        child.wait()
    assert facts.status == "zombie" and "not reaped" in facts.reason


def test_a_kernel_thread_is_named_as_one():
    facts = probe_process(ProbeContext(PROCESSES / "kernel-thread"), 2)
    assert (facts.status, facts.reason) == ("kernel_thread", "process 2 is a kernel thread, not a service")


def test_a_bad_pid_is_exit_2_with_one_line():
    result = run_doctor("--pid", "12ab", *NO_PROBES)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "paddle-doctor: error: Invalid value for --pid: '12ab' is not a process id; expected a number, auto or none"]


def _probe_as_nobody(pid, queue):
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
    queue.put(to_data(probe_process(ProbeContext("/"), pid, 0.2)))


@pytest.mark.skipif(os.geteuid() != 0, reason="dropping to another user needs root")
def test_another_users_process_is_read_as_far_as_permissions_allow(services):
    pid = services["env_helper"].pid
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_probe_as_nobody, args=(pid, queue))
    child.start()
    facts = queue.get(timeout=60)
    child.join()
    assert facts["status"] == "no_permission"
    assert facts["reason"].startswith(f"permission denied reading /proc/{pid}/exe, /proc/{pid}/environ, /proc/{pid}/maps: "
                                      "run the doctor as root or as the service's user (uid 0)")
    assert facts["environ"] == {} and facts["libraries"] == []
    assert facts["threads"] >= 1 and facts["rss_bytes"] > 0 and facts["script"] == str(SERVICES / "env_helper.py")


def until_its_user_is(pid: int, uid: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        if any(line.split()[:2] == ["Uid:", str(uid)] for line in status.splitlines()):
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} did not become uid {uid} in 30 s")


@pytest.mark.skipif(os.geteuid() != 0, reason="starting a process as another user needs root")
def test_root_reads_a_process_of_another_user():
    sleeper = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "60"])
    try:
        until_its_user_is(sleeper.pid, 65534)  # setpriv drops to it after its start: slow on a busy machine
        facts = probe_process(ProbeContext("/"), sleeper.pid, 0.2)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert (facts.status, facts.uid, facts.environ_source) == ("probed", 65534, f"/proc/{sleeper.pid}/environ")


def _capable_of_ptrace() -> bool:
    status = open("/proc/self/status").read()
    return bool(int(status.split("CapBnd:")[1].split()[0], 16) >> 19 & 1)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv") or not _capable_of_ptrace(),
                    reason="needs root with CAP_SYS_PTRACE to drop it, and setpriv")
def test_root_without_cap_sys_ptrace_is_told_to_add_it_not_to_run_as_root():
    """As in a container (CAP_SYS_PTRACE dropped): root, and still refused, so "run as root" would be untrue."""
    sleeper = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "60"])
    try:
        while not os.path.exists(f"/proc/{sleeper.pid}/status") or "65534" not in open(f"/proc/{sleeper.pid}/status").read():
            time.sleep(0.01)
        result = subprocess.run(["setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace", sys.executable, "-m",
                                 "paddle_doctor", "--pid", str(sleeper.pid), "--json", *NO_PROBES],
                                capture_output=True, text=True, timeout=120)
    finally:
        sleeper.kill()
        sleeper.wait()
    process = service_section(result)["process"]
    assert process["status"] == "no_permission"
    assert process["reason"].startswith(f"permission denied reading /proc/{sleeper.pid}/exe")
    assert process["reason"].endswith(": the doctor runs as root but without CAP_SYS_PTRACE, which reading another process needs "
                                      "(containers drop it): add it (docker run --cap-add SYS_PTRACE; Kubernetes "
                                      "securityContext.capabilities.add: [SYS_PTRACE]) or run the doctor as the service's user (uid 65534)")


def _refused_to_root(pid: int) -> bool:
    try:
        open(f"/proc/{pid}/environ", "rb").close()
        return False
    except PermissionError:
        return True


@pytest.mark.skipif(os.geteuid() != 0 or not _capable_of_ptrace() or not _refused_to_root(1),
                    reason="needs a kernel that refuses /proc/1/environ to root with CAP_SYS_PTRACE (as in a sandbox)")
def test_a_process_the_kernel_refuses_even_to_root_is_not_met_with_run_as_root():
    result = run_doctor("--pid", "1", "--json", *NO_PROBES)
    process = service_section(result)["process"]
    assert process["status"] == "no_permission"
    assert "run the doctor as root" not in process["reason"]
    assert ", although the doctor runs as root with CAP_SYS_PTRACE: the kernel refuses it for process 1" in process["reason"]


@pytest.mark.parametrize("super_options, said", [("rw,hidepid=invisible", True), ("rw,hidepid=2", True), ("rw", False)])
def test_a_pid_hidden_by_hidepid_says_so(tmp_path, super_options, said):
    root = tmp_path / "root"
    shutil.copytree(PROCESSES / "one-service", root, symlinks=True)
    (root / "proc" / "self").mkdir()
    (root / "proc" / "self" / "mountinfo").write_text(
        "22 1 0:5 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc " + super_options + "\n")
    process = service_section(run_doctor("--root", str(root), "--pid", "4300", "--json", *NO_PROBES))["process"]
    assert process["status"] == "vanished"
    assert process["reason"].startswith("process 4300 does not exist or exited while it was read")
    hint = (f"; /proc is mounted with {super_options.split(',')[1] if said else ''}, which hides other users' processes: "
            "run the doctor as the service's user, or as root with CAP_SYS_PTRACE")
    assert process["reason"].endswith(hint) is said and ("hidepid" in process["reason"]) is said


# ------------------------------------------------------------------ the automatic pick, on recorded /proc trees


def test_the_one_process_with_paddle_is_picked_and_its_script_read_under_the_root():
    root = PROCESSES / "one-service"
    result = run_doctor("--root", str(root), "--pid", "auto", "--json", *NO_PROBES)
    service = service_section(result)
    process = service["process"]
    assert (process["pid"], process["chosen_because"]) == (4242, "the only process with Paddle mapped (libpaddle in /proc/4242/maps)")
    assert (process["uid"], process["threads"], process["busy_threads"], process["rss_bytes"]) == (1000, 2, None, 512000 * 1024)
    versions = {(library["kind"], library["version"]) for library in process["libraries"]}
    assert {("onednn", "3"), ("cudnn", "8.6.0"), ("tensorrt", "8.6.1"), ("cuda", "11.8.89"), ("paddle", None)} <= versions
    assert process["environ"] == {"INFER_THREADS": "4", "OMP_NUM_THREADS": "4", "FLAGS_use_mkldnn": "1"}
    threads = origins(service)["threads"]
    assert threads["value"] == 4 and "live 4 in /proc/4242/environ" in threads["detail"]
    assert service["source"]["files"] == [str(root / "srv" / "app.py")]


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit", "text"])
def test_no_secret_from_the_services_environment_reaches_any_output(fmt):
    root = PROCESSES / "one-service"
    report = run_doctor("--root", str(root), "--pid", "4242", "--format", fmt, *NO_PROBES)
    facts = run_doctor("facts", "--root", str(root), "--pid", "4242", *NO_PROBES)
    assert report.stdout and facts.stdout
    for output in (report.stdout, report.stderr, facts.stdout):
        for secret in SECRETS:
            assert secret not in output
    assert json.loads(facts.stdout)["service_process"]["environ"]["API_TOKEN"] == "<redacted>"


def test_no_process_with_paddle_is_said_so():
    result = run_doctor("--root", str(PROCESSES / "kernel-thread"), "--pid", "auto", "--json", *NO_PROBES)
    assert service_section(result)["process"]["status"] == "not_found"
    assert "no process in this container has Paddle (libpaddle) mapped" in result.stderr


def test_recorded_facts_keep_the_service_reading_and_flags_still_win(tmp_path):
    recorded = tmp_path / "facts.json"
    assert run_doctor("facts", "--root", str(PROCESSES / "one-service"), "--pid", "4242", "-o", str(recorded),
                      *NO_PROBES).returncode == 0
    service = service_section(run_doctor("check", "--facts", str(recorded), "--threads", "2", "--json"))
    assert {name: (s["value"], s["origin"]) for name, s in origins(service).items()} == {
        "onednn": (False, "source"), "threads": (2, "flag")}
    assert service["process"]["pid"] == 4242


def test_with_no_flag_a_live_run_looks_for_the_service():
    """The machine as it is: the one service with Paddle mapped is read; where other programs map Paddle too
    (other test runs beside this one), the doctor names them and asks for --pid, exit 2, rather than pick."""
    result = run_doctor("--json", *NO_PROBES, unset=("PADDLE_DOCTOR_PID",))
    if result.returncode == 2:
        assert result.stdout == "" and re.fullmatch(r"paddle-doctor: error: \d+ unrelated services have Paddle mapped, .*; "
                                                    r"choose one with --pid\n", result.stderr), result.stderr
        return
    process = service_section(result)["process"]
    assert process["status"] != "not_probed"
    if process["status"] == "probed":
        assert process["chosen_because"].startswith("the only process with Paddle mapped")


def test_a_venv_python_started_from_the_path_is_the_interpreter_probed():
    """``CMD ["python", "app.py"]`` with ``ENV PATH=/venv/bin:$PATH``: /proc/PID/exe is the base
    interpreter, without the environment's Paddle; the PATH the service started with finds the venv's."""
    venv_bin = os.path.dirname(sys.executable)
    service = start("env_helper.py", {"PATH": f"{venv_bin}:{os.environ['PATH']}"}, argv=["python", str(SERVICES / "env_helper.py")])
    try:
        facts = json.loads(run_doctor("facts", "--pid", str(service.pid), "--no-gpu", timeout=180).stdout)
    finally:
        service.kill()
        service.wait()
    process = facts["service_process"]
    assert process["interpreter"] == sys.executable and "PATH" in process["interpreter_source"]
    assert facts["paddle"]["status"] == "ok" and facts["paddle"]["python"] == sys.executable


def test_a_venv_python_under_a_mounted_root_is_resolved_as_the_container_sees_it():
    """Under --root, the venv's ``python`` links to ``/usr/local/bin/python3.10`` of the container,
    not of the machine the doctor runs on: both /proc/PID/exe and the command's first word resolve
    inside the root, so the venv's interpreter is the one named."""
    root = PROCESSES / "venv-service"
    process = service_section(run_doctor("--root", str(root), "--pid", "4242", "--json", *NO_PROBES))["process"]
    assert (process["interpreter"], process["interpreter_source"]) == ("/opt/venv/bin/python", "/proc/4242/cmdline")


def test_links_resolve_inside_the_root_and_a_loop_is_an_error(tmp_path):
    (tmp_path / "usr" / "bin").mkdir(parents=True)
    (tmp_path / "usr" / "bin" / "python3").write_text("")
    (tmp_path / "usr" / "bin" / "python").symlink_to("python3")
    (tmp_path / "venv").symlink_to("/usr")
    (tmp_path / "loop").symlink_to("/loop")
    ctx = ProbeContext(tmp_path)
    assert ctx.resolve("/venv/bin/../bin/python") == "/usr/bin/python3"
    with pytest.raises(OSError, match="too many levels"):
        ctx.resolve("/loop/x")


def test_a_venv_python_found_on_the_path_under_a_mounted_root(tmp_path):
    """``CMD ["python", ...]`` with ``ENV PATH=/opt/venv/bin:...``, read under --root: the PATH
    lookup follows the venv's link inside the root too."""
    root = tmp_path / "root"
    shutil.copytree(PROCESSES / "venv-service", root, symlinks=True)
    proc = root / "proc" / "4242"
    (proc / "cmdline").write_bytes(b"python\0app.py\0")
    (proc / "environ").write_bytes((proc / "environ").read_bytes() + b"PATH=/opt/venv/bin:/usr/local/bin\0")
    process = service_section(run_doctor("--root", str(root), "--pid", "4242", "--json", *NO_PROBES))["process"]
    assert process["interpreter"] == "/opt/venv/bin/python" and "PATH" in process["interpreter_source"]
