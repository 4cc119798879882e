"""Service source built to stall, exhaust or mislead the source reader: a FIFO beside a followed
module, expressions whose values would take minutes or gigabytes to compute, a file Python's parser
cannot hold, folders that hold themselves. Each is read in bounded time, said in one line where a
file is not read, and the rest of the report follows. Real files, real FIFOs, real processes; the
doctor runs in a child process with a timeout, so a read that would hang fails instead."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import fixture_root, report_with_its_exit, run_doctor

ROOT = str(fixture_root("amd-avx512bf16-v2-quota"))
NO_PROBES = ("--no-paddle", "--no-gpu")
QUICK = 60  # seconds a run may take; each of these reads in well under one
ENGINE = """\
    import paddle.inference as paddle_infer

    config = paddle_infer.Config("m.json", "m.pdiparams")
    config.set_cpu_math_library_num_threads(8)
    predictor = paddle_infer.create_predictor(config)
    """


def write_tree(folder, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def threads_of(report: dict) -> list[tuple[object, str]]:
    return [(s["value"], s["origin"]) for s in report["service"]["settings"] if s["name"] == "threads"]


# ------------------------------------------------------------------ a FIFO beside a followed module


@pytest.fixture
def fifo_beside_a_module(tmp_path):
    """A script importing ``wrap.engine`` (inside a function it never calls: the process imports nothing),
    and a FIFO ``wrap/pipe.py`` no one writes beside the engine."""
    app = tmp_path / "app"
    write_tree(app, {
        "serve.py": """\
            import sys
            import time


            def serve():
                import wrap.engine


            print("ready", flush=True)
            time.sleep(float(sys.argv[1]))
            """,
        "wrap/__init__.py": "",
        "wrap/engine.py": ENGINE,
    })
    os.mkfifo(app / "wrap" / "pipe.py")
    return app / "serve.py"


def test_a_fifo_beside_a_followed_module_does_not_stop_source(fifo_beside_a_module):
    script = fifo_beside_a_module
    result = run_doctor("--root", ROOT, "--source", str(script), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    assert report["service"]["source"]["imported"] == [str(script.parent / "wrap" / "__init__.py"), str(script.parent / "wrap" / "engine.py")]
    assert threads_of(report) == [(8, "source")] and result.stderr == ""


def test_a_fifo_beside_a_followed_module_does_not_stop_pid(fifo_beside_a_module):
    script = fifo_beside_a_module
    process = subprocess.Popen([sys.executable, str(script), "120"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        result = run_doctor("--pid", str(process.pid), "--json", *NO_PROBES, timeout=QUICK)
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
    report = report_with_its_exit(result)
    assert report["service"]["source"]["files"][0] == str(script)
    assert str(script.parent / "wrap" / "engine.py") in report["service"]["source"]["imported"]
    assert threads_of(report) == [(8, "source")]


@pytest.fixture
def deep_folders(tmp_path):
    """Folders nested 1,100 deep (past Python's recursion limit) beside a followed module; removed
    from the bottom up, as no recursive walk could."""
    app = tmp_path / "app"
    write_tree(app, {"serve.py": "def serve():\n    import wrap.engine\n", "wrap/__init__.py": "", "wrap/engine.py": ENGINE})
    path = app / "wrap"
    for _ in range(1100):
        path = path / "d"
        path.mkdir()
    yield app / "serve.py"
    while path != app / "wrap":
        path.rmdir()
        path = path.parent


def test_folders_nested_past_recursion_beside_a_followed_module_are_searched_without_recursing(deep_folders):
    result = run_doctor("--root", ROOT, "--source", str(deep_folders), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    assert threads_of(report) == [(8, "source")] and result.stderr == ""


# ------------------------------------------------------------------ a file Python's own parser cannot hold


@pytest.mark.parametrize("text, words", [
    ("x = " + "-" * 10_000 + "1\n", "cannot read: nested more than 200 levels deep, the most the doctor follows"),
    ("x = " + "not " * 10_000 + "1\n", "cannot read: nested more than 200 levels deep, the most the doctor follows"),
    ("x = 1\n\0\n", "syntax error: source code string cannot contain null bytes"),
], ids=["10,000 unary minus signs", "10,000 nots", "a NUL byte"])
def test_a_file_pythons_parser_cannot_hold_is_one_line_and_the_other_files_are_read(tmp_path, text, words):
    # before: the parser's stack overflow (MemoryError) ended the run, and nothing was read
    bad, app = tmp_path / "bad.py", tmp_path / "app.py"
    bad.write_text(text)
    app.write_text(textwrap.dedent(ENGINE))
    result = run_doctor("--root", ROOT, "--source", str(bad), "--source", str(app), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    assert result.stderr == f"paddle-doctor: warning: {bad}:0: {words}; the rest of the source and the report follow\n"
    assert threads_of(report) == [(8, "source")]
    assert report["service"]["source"]["files"] == [str(bad), str(app)]


# ------------------------------------------------------------------ values no Config setting takes, never computed


def service_setting(tmp_path, call: str):
    app = tmp_path / "app.py"
    app.write_text(textwrap.dedent(ENGINE).replace("config.set_cpu_math_library_num_threads(8)", call))
    result = run_doctor("--root", ROOT, "--source", str(app), "--json", *NO_PROBES, timeout=QUICK)
    return app, result, report_with_its_exit(result)


@pytest.mark.parametrize("expression", ["9 ** 9 ** 9", "1 << 10 ** 10", "'a' * 10 ** 10", "2 ** 20000", "-2 ** 64", "float('inf')",
                                        "123456789012345678901234567890"])
def test_a_number_past_what_a_setting_takes_is_not_computed_and_is_unknown(tmp_path, expression):
    # before: 9 ** 9 ** 9 ran for minutes, 1 << 10 ** 10 took 1.3 GB, and 2 ** 20000 ended the run (no JSON prints it)
    app, result, report = service_setting(tmp_path, f"config.set_cpu_math_library_num_threads({expression})")
    (threads,) = [s for s in report["service"]["settings"] if s["name"] == "threads"]
    assert threads["value"] is None and result.stderr == ""
    assert threads["detail"] == (f"set at {app}:4 from an expression the doctor cannot evaluate: "
                                 f"config.set_cpu_math_library_num_threads({expression})")


def test_a_number_within_what_a_setting_takes_is_computed(tmp_path):
    _, _, report = service_setting(tmp_path, "config.set_cpu_math_library_num_threads(2 ** 3 + (1 << 2) - 4)")
    assert threads_of(report) == [(8, "source")]


def test_a_tensorrt_workspace_that_is_no_integer_is_no_value_and_the_report_follows(tmp_path):
    _, result, report = service_setting(tmp_path, "config.enable_use_gpu(100, 0)\nconfig.enable_tensorrt_engine(workspace_size=1.5)")
    (workspace,) = [s for s in report["service"]["settings"] if s["name"] == "tensorrt.workspace_mb"]
    assert workspace["value"] is None and result.stderr == ""


def test_evaluating_counts_against_the_time_the_source_read_is_given(tmp_path):
    from paddle_doctor.source.evaluate import Evaluator
    from paddle_doctor.source.module import Module, OutOfTime

    module = Module.parse(str(tmp_path / "app.py"), "threads = 2 ** 3\n", deadline=time.monotonic() - 1)
    with pytest.raises(OutOfTime):  # past the read's deadline, even an expression that needs no question of the module
        Evaluator(module, None).evaluate(module.tree.body[0].value)


# ------------------------------------------------------------------ folders that hold themselves


@pytest.fixture
def linked_service(tmp_path):
    """A service folder holding a link to itself (``loop -> loop``) beside its script, and a package
    linked into itself (``pkg/here -> .``) the script imports through the link."""
    service = tmp_path / "service"
    write_tree(service, {
        "serve.py": "import pkg\nimport pkg.here.engine\nimport pkg.here.here.here.engine\n",
        "pkg/__init__.py": "from .here import engine\nfrom .here.here import engine as again\n",
        "pkg/engine.py": ENGINE,
    })
    (service / "loop").symlink_to("loop")
    (service / "pkg" / "here").symlink_to(".")
    return service


def test_a_link_to_itself_in_a_source_folder_is_named_and_counted_and_the_folder_is_read(linked_service):
    # before: the link ended the listing of its folder, silently: "every Python file given was read (0)", exit 0
    service = linked_service
    result = run_doctor("--root", ROOT, "--source", str(service), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    loop = f"{service / 'loop'}:0: {os.strerror(errno.ELOOP)}"
    assert result.stderr == (f"paddle-doctor: warning: {service / 'loop'}:0: cannot read: {os.strerror(errno.ELOOP)}; "
                             "the rest of the source and the report follow\n")
    assert report["service"]["source"]["files"] == [str(service / name) for name in ("serve.py", "pkg/__init__.py", "pkg/engine.py")]
    (coverage,) = [f for f in report["findings"] if f["rule_id"] == "PD-SRC-008"]
    assert (coverage["status"], coverage["message"]) == ("fail", f"1 file not read ({loop})")
    assert [location["file"] for location in coverage["locations"]] == [str(service / "loop")]
    assert threads_of(report) == [(8, "source")] and report["exit_code"] == 1


def test_a_package_linked_into_itself_is_read_once_by_the_first_name_met(linked_service):
    # before: pkg/engine.py was read as 40 modules (pkg.here.engine, pkg.here.here.engine, ...), one predictor each
    service = linked_service
    result = run_doctor("--root", ROOT, "--source", str(service / "serve.py"), "--json", *NO_PROBES, timeout=QUICK)
    report = report_with_its_exit(result)
    source = report["service"]["source"]
    assert source["imported"] == [str(service / "pkg" / "__init__.py"), str(service / "pkg" / "here" / "engine.py")]
    assert len(report["service"]["predictors"]) == 1 and threads_of(report) == [(8, "source")]
    assert result.stderr == ""
