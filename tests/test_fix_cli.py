"""``paddle-doctor fix`` from the command line, on the example service's own files (serve.py builds its Config
from service.yaml, which the doctor reads with --config): the diff shown, --write, the second run empty,
--verify measuring the patched configuration on the real predictor, and the refusals."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from cli_runs import run_doctor
from conftest import REPO

EXAMPLE = REPO / "examples" / "service"


@pytest.fixture
def service(tmp_path, monkeypatch):
    """A copy of the example service misconfigured as the demo is: 64 threads (more than any CPU budget of a
    test machine), oneDNN off; committed in a git repository of its own."""
    folder = tmp_path / "service"
    folder.mkdir()
    shutil.copy(EXAMPLE / "serve.py", folder / "serve.py")
    text = (EXAMPLE / "service.yaml").read_text()
    text = re.sub(r"^threads: 2 ", "threads: 64", text, flags=re.M).replace("\nonednn: true\n", "\nonednn: false\n")
    (folder / "service.yaml").write_text(text)
    for command in (["init", "-q"], ["add", "."], ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "service"]):
        subprocess.run(["git", "-C", str(folder), *command], check=True)
    monkeypatch.chdir(folder)  # the diff names the files relative to where the command runs
    return folder


def fix(service, *args, **kwargs):
    return run_doctor("fix", "--config", str(service / "service.yaml"), "--source", str(service / "serve.py"),
                      "--pid", "none", *args, **kwargs)


def changed_lines(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]


@pytest.mark.slow
def test_the_diff_changes_the_config_file_where_the_settings_come_from_and_write_makes_the_next_run_empty(service):
    before = (service / "service.yaml").read_text()
    shown = fix(service)
    assert shown.returncode == 1, shown.stderr
    assert (service / "service.yaml").read_text() == before  # --diff writes nothing
    changed = changed_lines(shown.stdout)
    threads = re.fullmatch(r"\+threads: (\d+) +# set_cpu_math_library_num_threads: the container's CPU limit is 2", changed[1])
    assert changed[0].startswith("-threads: 64") and threads and 1 <= int(threads.group(1)) < 64
    assert changed[2:] == ["-onednn: false", "+onednn: true"]
    assert re.search(r"^# service\.yaml:5  PD-CPU-010 threads 64 -> \d+ \(not measured: .*\) \[safe\]$", shown.stdout, re.M)
    assert "# service.yaml:7  PD-CPU-004 onednn False -> True" in shown.stdout
    assert "serve.py" not in shown.stdout  # the service reads them from service.yaml: its code is not edited
    assert "2 fixes in 1 file shown; --write applies them" in shown.stderr

    applied = subprocess.run(["git", "-C", str(service), "apply", "--check", "-"], input=shown.stdout, text=True,
                             capture_output=True)
    assert applied.returncode == 0, applied.stderr  # the diff is one git applies

    written = fix(service, "--write")
    assert written.returncode == 0, written.stderr
    assert "applied 2 fixes in 1 file: " in written.stderr
    after = (service / "service.yaml").read_text()
    kept = [line for line in before.splitlines() if not line.startswith(("threads:", "onednn:"))]
    assert [line for line in after.splitlines() if not line.startswith(("threads:", "onednn:"))] == kept  # comments and the rest kept
    assert "warning" not in written.stderr  # a committed, clean file

    again = fix(service)
    assert (again.returncode, again.stdout) == (0, "")
    # left to say: nothing, or the unsafe fixes not shown (bf16 where the CPU has it)
    assert re.fullmatch(r"paddle-doctor fix: (nothing to change: .*|1 unsafe fix not shown \(PD-PREC-001 precision\); "
                        r"--unsafe-fixes shows it)\n", again.stderr), again.stderr


@pytest.mark.slow
def test_write_warns_when_the_file_is_not_committed(service):
    (service / "service.yaml").write_text((service / "service.yaml").read_text() + "# edited by hand\n")
    written = fix(service, "--write")
    assert written.returncode == 0, written.stderr
    assert re.search(r"warning: .*service\.yaml", written.stderr)


@pytest.mark.slow
def test_select_and_ignore_choose_the_rules(service):
    only = fix(service, "--select", "PD-CPU-004")
    assert changed_lines(only.stdout) == ["-onednn: false", "+onednn: true"]
    ignored = fix(service, "--ignore", "PD-CPU-004")
    assert [line[:8] for line in changed_lines(ignored.stdout)] == ["-threads", "+threads"]


def test_a_flag_is_never_edited_and_says_what_to_pass(service):
    shown = fix(service, "--threads", "64", "--no-paddle")
    assert "threads" not in "".join(changed_lines(shown.stdout))
    assert re.search(r"not applied: PD-CPU-010 threads: threads is given on the command line \(--threads\); it is no file's",
                     shown.stderr)
    assert shown.returncode == 1


@pytest.mark.parametrize("args, message", [
    (("--verify",), "--verify measures the patched files: it needs --write"),
    (("--write", "--verify"), "--verify measures the model: give it with --model, or --measure for a recorded service"),
])
def test_verify_without_what_it_needs_is_one_line_and_exit_2(service, args, message):
    refused = fix(service, "--no-paddle", *args)
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [f"paddle-doctor: error: {message}"]
    assert refused.stdout == ""


@pytest.mark.slow
def test_write_verify_measures_the_patched_configuration_faster_than_the_original(service, models):
    written = fix(service, "--model", str(models["cnn-pir"]), "--budget", "20", "--write", "--verify", timeout=300)
    assert written.returncode == 0, written.stderr
    measured = re.search(r"the patched files give (.*); against the original it measured ([\d.]+)x faster "
                         r"\(9\d% CI ([\d.]+)-([\d.]+)x\): improved", written.stderr)
    assert measured, written.stderr
    assert "oneDNN on" in measured.group(1) and float(measured.group(3)) > 1.0
    assert re.search(r"the (fixes applied are part of the recommendation|report predicted)", written.stderr)
    again = fix(service)
    assert again.stdout == ""
