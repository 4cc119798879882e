"""Inputs that would block, never end, nest past recursion, or run code: each is refused in one line
naming the file and what was expected, in bounded time, and the rest of the report still comes out
where the input is one part of it (real FIFOs, /dev/zero, /dev/full, generated files)."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time

import pytest
from conftest import fixture_root, report_with_its_exit, run_doctor, statuses
from opened import folder_openings
from paddle_doctor.base.inputs import MAX_DEPTH, SAMPLE_BYTES, SYSTEM_BYTES, Refused, read_bytes
from paddle_doctor.source import MAX_FILES
from test_registry import install_plugin

ROOT = str(fixture_root("amd-avx512bf16-v2-quota"))  # cgroup v2, a quota of 1.5 CPUs
NO_PROBES = ("--no-paddle", "--no-gpu")
QUICK = 60  # seconds any of these runs may take; each is refused or answered in well under one
FIFO_WORDS = "is a FIFO (named pipe), not a regular file"
DEVICE_WORDS = "is a character device, not a regular file"
THREADS_8 = ("import paddle.inference as paddle_infer\nconfig = paddle_infer.Config('m.json', 'm.pdiparams')\n"
             "config.set_cpu_math_library_num_threads(8)\n")


def one_line_error(result, *words: str) -> str:
    """Exit 2, one line on stderr holding ``words``, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    return result.stderr


def unhealthy_line(result, *words: str) -> str:
    """The healthcheck's answer: exit 1, one line on stdout holding ``words``."""
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    (line,) = result.stdout.splitlines()
    assert line.startswith("unhealthy: ") and "Traceback" not in result.stderr, (line, result.stderr)
    for word in words:
        assert word in line, line
    return line


def deeply_nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return str(path)


@pytest.fixture(params=["fifo", "/dev/zero"])
def endless(request, tmp_path):
    """A FIFO no one writes (a read would wait for ever) or /dev/zero (a read would never end), and the words refusing it."""
    if request.param == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
        return str(path), FIFO_WORDS
    return "/dev/zero", DEVICE_WORDS


# ------------------------------------------------------------------ the reading function itself


def test_proc_files_that_say_they_are_empty_are_read_to_their_end_and_bounded():
    assert os.stat("/proc/self/status").st_size == 0
    assert b"VmRSS:" in read_bytes("/proc/self/status", SYSTEM_BYTES)
    with pytest.raises(Refused, match="is larger than 10 bytes, the most the doctor reads of such a file"):
        read_bytes("/proc/self/status", 10)


def test_a_socket_and_a_folder_are_refused_as_what_they_are(tmp_path):
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(tmp_path / "sock"))
        with pytest.raises(Refused, match=r"^is a socket, not a regular file$"):
            read_bytes(tmp_path / "sock", 100)
    with pytest.raises(Refused, match=r"^is a folder, not a regular file$"):
        read_bytes(tmp_path, 100)


def test_a_name_no_path_can_have_is_refused_as_such():
    with pytest.raises(Refused, match=r"^is not a path \(it holds a NUL character\)$"):
        read_bytes("/proc/self/status\0", 100)


def test_a_regular_file_past_its_bound_is_refused_unread(tmp_path):
    sparse = tmp_path / "facts.json"
    with open(sparse, "wb") as handle:
        handle.truncate(64 * 1024 * 1024 + 1)  # no disk used: the size alone refuses it
    started = time.monotonic()
    one_line_error(run_doctor("check", "--facts", str(sparse), timeout=QUICK),
                   f"{sparse}: the facts file is larger than 64 MiB, the most the doctor reads of such a file; "
                   "expected the output of 'paddle-doctor facts'")
    assert time.monotonic() - started < QUICK / 2


# ------------------------------------------------------------------ every option naming a file to read


READERS = {
    "--facts": (lambda path: ["check", "--facts", path], "facts", "expected the output of 'paddle-doctor facts'"),
    "--config": (lambda path: ["check", "--root", ROOT, "--config", path], "service config", "see doctor/facts/service_config.py for the keys"),
    "--settings": (lambda path: ["check", "--root", ROOT, "--settings", path], "settings", "expected keys"),
    "--rules": (lambda path: ["check", "--root", ROOT, "--rules", path], "rules", "expected a rules.yaml"),
    "rules --rules": (lambda path: ["rules", "--rules", path], "rules", "expected a rules.yaml"),
    "baseline --rules": (lambda path: ["baseline", "--root", ROOT, "--out", os.devnull, "--rules", path], "rules", "expected a rules.yaml"),
    "fleet": (lambda path: ["fleet", path], "report", "expected the output of 'paddle-doctor --json'"),
}


@pytest.mark.parametrize("option", READERS)
def test_a_fifo_or_dev_zero_given_to_an_option_is_refused_in_one_line(endless, option):
    path, words = endless
    args, kind, expected = READERS[option]
    one_line_error(run_doctor(*args(path), timeout=QUICK), f"{path}: the {kind} file {words}; {expected}")


def test_a_fifo_or_dev_zero_as_the_kubeconfig_is_refused_before_the_client_reads_it(endless):
    path, words = endless
    one_line_error(run_doctor("fleet", "--kubernetes", "-l", "app=ocr", "--kubeconfig", path, timeout=QUICK),
                   f"{path}: the kubeconfig file {words}; expected --kubeconfig FILE")


@pytest.mark.parametrize("option", ["--baseline", "--config"])
def test_the_healthcheck_answers_unhealthy_for_a_fifo_or_dev_zero(endless, option):
    path, words = endless
    kind = "baseline" if option == "--baseline" else "service config"
    unhealthy_line(run_doctor("healthcheck", "--root", ROOT, option, path, timeout=QUICK), f"{path}: the {kind} file {words}")


def test_the_healthcheck_reads_no_more_of_dev_zero_than_a_baseline_may_hold():
    """/dev/zero is refused before it is opened: nothing is read, so no memory grows."""
    result = run_doctor("healthcheck", "--baseline", "/dev/zero", "--json", timeout=QUICK)
    detail = json.loads(result.stdout)
    assert result.returncode == 1 and detail["error"].startswith(f"/dev/zero: the baseline file {DEVICE_WORDS}")
    assert detail["seconds"] < 2


@pytest.mark.parametrize("source", ["fifo", "/dev/zero"])
def test_a_fifo_or_a_device_as_source_is_said_to_be_what_it_is(fifo, source):
    path = fifo if source == "fifo" else "/dev/zero"
    what = "a FIFO (named pipe)" if source == "fifo" else "a character device"
    one_line_error(run_doctor("--root", ROOT, "--source", path, *NO_PROBES, timeout=QUICK),
                   f"--source {path}: is {what}; expected the service's .py file or its folder")


ROOT_EXPECTED = "expected a folder (a container's file system mounted here, or / for this machine)"


@pytest.fixture(params=["/dev/zero", "fifo", "file", "missing", "under a file"])
def not_a_root(request, tmp_path):
    """A --root that names no folder, and what the doctor says it is."""
    if request.param == "/dev/zero":
        return "/dev/zero", "is a character device"
    if request.param == "fifo":
        os.mkfifo(tmp_path / "pipe")
        return str(tmp_path / "pipe"), "is a FIFO (named pipe)"
    (tmp_path / "file").write_text("not a folder\n")
    if request.param == "file":
        return str(tmp_path / "file"), "is a file"
    return str(tmp_path / ("missing" if request.param == "missing" else "file/root")), "no such folder"


@pytest.mark.parametrize("command", ["check", "facts", "baseline"])
def test_a_root_that_is_no_folder_is_one_line_before_any_work(not_a_root, command, tmp_path):
    root, what = not_a_root
    out = tmp_path / "out"
    args = {"check": ["--output", str(out)], "facts": ["facts"], "baseline": ["baseline", "--out", str(out)]}[command]
    started = time.monotonic()
    result = run_doctor(*args, "--root", root, timeout=QUICK)
    one_line_error(result)
    assert result.stderr == f"paddle-doctor: error: --root {root}: {what}; {ROOT_EXPECTED}\n"
    assert not out.exists() and time.monotonic() - started < QUICK / 2  # nothing was written: nothing was probed


def test_the_healthcheck_answers_unhealthy_for_a_root_that_is_no_folder(not_a_root):
    root, what = not_a_root
    unhealthy_line(run_doctor("healthcheck", "--root", root, timeout=QUICK), f"unhealthy: --root {root}: {what}; {ROOT_EXPECTED}")


# ------------------------------------------------------------------ files found, not given: the rest of the report follows


def test_a_fifo_inside_a_source_folder_is_named_and_the_other_files_are_read(tmp_path):
    folder = tmp_path / "service"
    folder.mkdir()
    (folder / "app.py").write_text(THREADS_8)
    os.mkfifo(folder / "pipe.py")
    result = run_doctor("--root", ROOT, "--source", str(folder), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    assert result.stderr == (f"paddle-doctor: warning: {folder / 'pipe.py'}:0: cannot read: {FIFO_WORDS}; "
                             "the rest of the source and the report follow\n")
    (threads,) = [s for s in report["service"]["settings"] if s["name"] == "threads"]
    assert threads["value"] == 8 and threads["origin"] == "source"  # app.py was read
    (coverage,) = [f for f in report["findings"] if f["rule_id"] == "PD-SRC-008"]
    assert coverage["status"] == "fail" and f"pipe.py:0: {FIFO_WORDS}" in coverage["message"]
    assert result.returncode == 1


def test_a_fifo_as_a_cgroup_file_under_root_is_named_and_the_report_follows(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(ROOT, root)
    quota = root / "sys/fs/cgroup/cpu.max"
    quota.unlink()
    os.mkfifo(quota)
    result = run_doctor("--root", str(root), "--threads", "8", "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    (budget,) = [f for f in report["findings"] if f["rule_id"] == "PD-CPU-010"]
    assert budget["status"] == "error"
    assert budget["message"] == f"cannot establish the CPU budget: cannot read /sys/fs/cgroup/cpu.max: {FIFO_WORDS}"
    assert statuses(report)["PD-CPU-012"] == "fail"  # cpu.stat, beside it, was read
    assert result.returncode == 1
    line = unhealthy_line(run_doctor("healthcheck", "--root", str(root), "--threads", "8", timeout=QUICK))
    assert line.startswith(f"unhealthy: cannot read /sys/fs/cgroup/cpu.max: {FIFO_WORDS}")


@pytest.mark.parametrize("program", ["fifo", "nested"])
def test_a_model_program_that_is_a_fifo_or_nested_too_deeply_is_a_finding_and_the_report_follows(tmp_path, program):
    model = tmp_path / "model"
    model.mkdir()
    (model / "inference.pdiparams").write_bytes(b"weights")
    if program == "fifo":
        os.mkfifo(model / "inference.json")
        words = f"{FIFO_WORDS}; expected a Paddle program file (*.json, *.pdmodel or __model__)"
    else:
        (model / "inference.json").write_text(deeply_nested(100_000))
        words = f"is nested more than {MAX_DEPTH} levels deep, the most the doctor reads; expected a Paddle PIR program"
    result = run_doctor("--root", ROOT, "--model", str(model), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    (unreadable,) = [f for f in report["findings"] if f["rule_id"] == "PD-GRAPH-006"]
    assert unreadable["status"] == "fail" and unreadable["message"] == f"{model / 'inference.json'}: {words}"
    assert "Traceback" not in result.stderr and result.returncode == 1


# ------------------------------------------------------------------ nested past what recursion can walk


def chained_terms(count: int) -> str:
    terms = " + ".join(["1"] * count)
    return THREADS_8.replace("num_threads(8)", f"num_threads({terms})")


@pytest.mark.parametrize("terms, line", [(450, 3), (100_000, 0)], ids=["450 terms", "past Python's own parser"])
def test_a_long_expression_names_the_file_as_not_read_and_the_report_follows(tmp_path, terms, line):
    deep = tmp_path / "deep.py"
    deep.write_text(chained_terms(terms))
    result = run_doctor("--root", ROOT, "--source", str(deep), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    assert result.stderr == (f"paddle-doctor: warning: {deep}:{line}: cannot read: nested more than 200 levels deep, the most "
                             "the doctor follows; the rest of the source and the report follow\n")
    (coverage,) = [f for f in report["findings"] if f["rule_id"] == "PD-SRC-008"]
    assert coverage["status"] == "fail" and coverage["severity"] == "error"
    assert result.returncode == 1  # the file's settings were not judged: the run does not pass as if they were


def test_an_expression_within_the_bound_is_read(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(chained_terms(190))
    result = run_doctor("--root", ROOT, "--source", str(app), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    assert result.stderr == "" and statuses(report)["PD-SRC-008"] == "pass"
    (threads,) = [s for s in report["service"]["settings"] if s["name"] == "threads"]
    assert "from an expression the doctor cannot evaluate" in threads["detail"]


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 100_000])
def test_deeply_nested_facts_are_refused_in_one_line(tmp_path, levels):
    facts = tmp_path / "facts.json"
    facts.write_text(deeply_nested(levels))
    one_line_error(run_doctor("check", "--facts", str(facts), timeout=QUICK),
                   f"{facts}: the facts file is nested more than {MAX_DEPTH} levels deep, the most the doctor reads; "
                   "expected the output of 'paddle-doctor facts'")


def test_a_deeply_nested_fleet_report_is_refused_in_one_line(tmp_path):
    report = tmp_path / "pod-a.json"
    report.write_text(deeply_nested(100_000))
    one_line_error(run_doctor("fleet", str(report), timeout=QUICK),
                   f"{report}: the report file is nested more than {MAX_DEPTH} levels deep")


def test_a_deeply_nested_baseline_is_unhealthy_in_one_line(tmp_path):
    baseline = tmp_path / "baseline.json"
    baseline.write_text(deeply_nested(100_000))
    unhealthy_line(run_doctor("healthcheck", "--baseline", str(baseline), timeout=QUICK),
                   f"{baseline}: the baseline file is nested more than {MAX_DEPTH} levels deep")


ALIASES = "l0: &l0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]\n" for n in range(1, 9))  # 9 ** 9 values from 600 characters


@pytest.mark.parametrize("text, words", [
    ("threads: " + deeply_nested(999), f"is nested more than {MAX_DEPTH} levels deep"),
    (ALIASES, "holds more values than its text writes out"),
], ids=["nested", "aliases"])
def test_yaml_nested_too_deeply_or_repeating_itself_is_refused(tmp_path, text, words):
    config = tmp_path / "service.yaml"
    config.write_text(text)
    one_line_error(run_doctor("--root", ROOT, "--config", str(config), *NO_PROBES, timeout=QUICK), f"{config}: the service config file {words}")


# ------------------------------------------------------------------ the files --source reads: a cap is said


def test_past_the_source_cap_the_search_stops_the_finding_says_so_and_the_exit_code_stays_honest(tmp_path):
    folder = tmp_path / "monorepo"
    folder.mkdir()
    for number in range(MAX_FILES + 10):
        (folder / f"m{number:05d}.py").write_text("x = 1\n")
    (folder / "zz_service.py").write_text(THREADS_8)  # sorted last: past the cap
    later = folder / "zz_vendored"  # searched after the files beside it: never, once the cap is reached
    later.mkdir()
    (later / "big.py").write_text("x = 1\n")
    alone = report_with_its_exit(run_doctor("--root", ROOT, "--source", str(folder / "zz_service.py"), "--json", *NO_PROBES, timeout=QUICK))
    assert statuses(alone)["PD-CPU-010"] == "fail" and alone["exit_code"] == 1
    with folder_openings(later) as openings:
        result = run_doctor("--root", ROOT, "--source", str(folder), "--json", *NO_PROBES, timeout=QUICK)
    assert openings == []  # the search stopped at the cap: the folder past it was never listed
    capped = report_with_its_exit(result)
    assert statuses(capped)["PD-CPU-010"] == "pass"  # the 8 threads were never read ...
    (coverage,) = [f for f in capped["findings"] if f["rule_id"] == "PD-SRC-008"]
    assert coverage["status"] == "fail" and coverage["severity"] == "error"  # ... and that is said
    assert coverage["message"] == ("the read stopped at 2,000 Python files, the most the doctor reads in one run: "
                                   "more were found, and the folders were not searched further")
    assert capped["service"]["source"]["stopped"] == "files" and len(capped["service"]["source"]["files"]) == MAX_FILES
    assert capped["exit_code"] == 1


def test_the_source_search_enters_no_kernel_file_system_and_no_folder_twice(tmp_path):
    folder = tmp_path / "service"
    folder.mkdir()
    (folder / "app.py").write_text(THREADS_8)
    (folder / "loop").symlink_to(folder)  # a folder holding itself
    (folder / "system").symlink_to("/proc")
    os.symlink("app.py", folder / "same.py")  # a file linked under another name is read once, by the first
    result = run_doctor("--root", ROOT, "--source", str(folder), "--source", str(folder), "--source", "/proc", "--source", "/sys",
                        "--source", "/dev", "--json", *NO_PROBES, timeout=QUICK)
    source = report_with_its_exit(result)["service"]["source"]
    assert source["files"] == [str(folder / "app.py")] and source["stopped"] is None
    assert result.stderr == "" and result.returncode == 1, result.stderr


# ------------------------------------------------------------------ a baseline names checks, never code


def pin(baseline, name: str, reference: str) -> None:
    data = json.loads(baseline.read_text())
    (pinned,) = [check for check in data["checks"] if check["name"] == name]
    pinned["reference"] = reference
    baseline.write_text(json.dumps(data))


@pytest.fixture
def baseline(tmp_path):
    path = tmp_path / "baseline.json"
    result = run_doctor("baseline", "--root", ROOT, "--out", str(path), "--threads", "1", timeout=QUICK)
    assert result.returncode == 0, result.stderr
    assert run_doctor("healthcheck", "--baseline", str(path), timeout=QUICK).returncode == 0
    return path


def test_a_baseline_naming_this_check_does_not_import_it(baseline):
    pin(baseline, "cpu_budget", "this:CHECK")
    result = run_doctor("healthcheck", "--baseline", str(baseline), timeout=QUICK)
    unhealthy_line(result, "the baseline pins check 'cpu_budget' as 'this:CHECK', which no installed package registers",
                   f"re-create the baseline with 'paddle-doctor baseline --out {baseline}'")
    assert "Zen of Python" not in result.stdout + result.stderr


def test_a_baseline_naming_a_planted_module_does_not_run_it(baseline, tmp_path):
    planted = tmp_path / "site"
    planted.mkdir()
    ran = tmp_path / "the-planted-module-ran"
    (planted / "evilmod.py").write_text(f"open({str(ran)!r}, 'w').close()\n"
                                        "from paddle_doctor.checks.cpu_budget import CHECK\n")
    pin(baseline, "cpu_budget", "evilmod:CHECK")
    result = run_doctor("healthcheck", "--baseline", str(baseline), env={"PYTHONPATH": str(planted)}, timeout=QUICK)
    unhealthy_line(result, "the baseline pins check 'cpu_budget' as 'evilmod:CHECK', which no installed package registers")
    assert not ran.exists()


def test_a_baseline_cannot_pin_one_check_under_another_name(baseline):
    pin(baseline, "cpu_budget", "paddle_doctor.checks.cpu_quota:CHECK")
    unhealthy_line(run_doctor("healthcheck", "--baseline", str(baseline), timeout=QUICK),
                   "the baseline pins check 'cpu_budget' as 'paddle_doctor.checks.cpu_quota:CHECK', which is the check 'cpu_quota'")


def test_a_pinned_third_party_check_that_is_installed_still_runs(tmp_path):
    ran = tmp_path / "the-plugin-ran"
    install_plugin(tmp_path, f'''
        """Plugin. Why: test. Fix: none."""
        from paddle_doctor.judge.findings import passed
        from paddle_doctor.judge.registry import Check

        def run(facts):
            open({str(ran)!r}, "w").close()
            return [passed("PD-CPU-013", "ok")]

        CHECK = Check(name="site_plugin", rules=("PD-CPU-013",), run=run)
    ''')
    plugin = {"PYTHONPATH": str(tmp_path)}
    baseline = tmp_path / "baseline.json"
    assert run_doctor("baseline", "--root", ROOT, "--out", str(baseline), "--threads", "1", env=plugin, timeout=QUICK).returncode == 0
    assert not ran.exists()  # recording a baseline runs no check
    result = run_doctor("healthcheck", "--baseline", str(baseline), env=plugin, timeout=QUICK)
    assert result.returncode == 0 and result.stdout.startswith("healthy: "), result.stdout
    assert ran.exists()


# ------------------------------------------------------------------ outputs: opened before the work


def test_a_fifo_output_that_nothing_reads_is_refused_before_any_work(fifo, tmp_path):
    result = run_doctor("--root", ROOT, "--output", fifo, "--config", str(tmp_path / "missing.yaml"), timeout=QUICK)
    one_line_error(result, f"{fifo}: cannot write the report: it is a FIFO (named pipe) that nothing reads; expected a file")


def test_a_fifo_output_being_read_gets_the_whole_report(fifo):
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader before the doctor looks for one
    holder = os.open(fifo, os.O_WRONLY)  # and a writer of the test's own, so that the reader waits for the doctor's end
    os.set_blocking(reader, True)
    chunks: list[bytes] = []
    drained = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(reader, 65536), b"")))
    drained.start()
    try:
        result = run_doctor("--root", ROOT, "--json", "--output", fifo, *NO_PROBES, timeout=QUICK)
    finally:
        os.close(holder)
        drained.join(QUICK)
        os.close(reader)
    assert result.returncode == 0, result.stderr
    assert json.loads(b"".join(chunks))["tool"]["name"] == "paddle-doctor"


# ------------------------------------------------------------------ real inputs (--inputs): bounded as the worker loads them

NPZ_EXPECTED = "(expected an .npz archive keyed by input name (numpy.savez), or a folder of them)"


def npz_declaring(path, shape: tuple[int, ...]) -> str:
    """An .npz of one float32 array 'x' whose header says ``shape``: the header alone, no data."""
    import zipfile

    header = repr({"descr": "<f4", "fortran_order": False, "shape": shape}).encode("latin1")
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.npy", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
    return str(path)


def test_an_npz_past_its_bound_is_refused_unread(tmp_path):
    from paddle_doctor.verify.npz import NpzError, read_samples

    sparse = tmp_path / "sample.npz"
    with open(sparse, "wb") as handle:
        handle.truncate(SAMPLE_BYTES + 1)  # no disk used: the size alone refuses it
    started = time.monotonic()
    with pytest.raises(NpzError) as refused:
        read_samples(sparse)
    assert str(refused.value) == f"{sparse}: is larger than 1024 MiB, the most the doctor reads of such a file {NPZ_EXPECTED}"
    assert time.monotonic() - started < 1


def test_npz_arrays_larger_together_than_the_worker_loads_are_refused_by_their_headers(tmp_path):
    from paddle_doctor.verify.npz import NpzError, read_npz_header, read_samples

    huge = npz_declaring(tmp_path / "huge.npz", (1 << 28, 2))  # 2 GiB of float32, said in 150 bytes
    with pytest.raises(NpzError, match=r"huge.npz: holds arrays of 2,147,483,648 bytes, more than 1024 MiB, "
                                       r"the most the doctor loads as inputs"):
        read_npz_header(huge)
    folder = tmp_path / "samples"
    folder.mkdir()
    for name in ("a", "b", "c"):  # each within the bound, all three not
        npz_declaring(folder / f"{name}.npz", (1 << 26, 2))
    assert read_npz_header(folder / "a.npz")["x"].shape == (1 << 26, 2)
    with pytest.raises(NpzError, match=rf"^{folder}: holds arrays of 1,610,612,736 bytes, more than 1024 MiB"):
        read_samples(folder)


def test_a_fifo_among_npz_samples_is_refused_by_name(tmp_path):
    from paddle_doctor.verify.npz import NpzError, read_samples

    npz_declaring(tmp_path / "a.npz", (1, 3))
    os.mkfifo(tmp_path / "b.npz")
    with pytest.raises(NpzError) as refused:
        read_samples(tmp_path)
    assert str(refused.value) == f"{tmp_path / 'b.npz'}: {FIFO_WORDS} {NPZ_EXPECTED}"


@pytest.mark.parametrize("sample", ["sparse", "fifo", "/dev/zero"])
def test_an_npz_given_to_inputs_that_cannot_be_loaded_is_one_line(models, tmp_path, sample):
    path = tmp_path / "sample.npz"
    if sample == "sparse":
        with open(path, "wb") as handle:
            handle.truncate(SAMPLE_BYTES + 1)
        words = "is larger than 1024 MiB, the most the doctor reads of such a file"
    elif sample == "fifo":
        os.mkfifo(path)
        words = "is a FIFO (named pipe)"
    else:
        path, words = "/dev/zero", "is a character device"
    result = run_doctor("--pid", "none", "--root", ROOT, *NO_PROBES, "--model", str(models["recognizer-pir"]),
                        "--inputs", str(path), "--budget", "3", timeout=QUICK)
    assert one_line_error(result).startswith(f"paddle-doctor: error: --inputs {path}: {words}")
