"""The text report on odd terminals: COLUMNS of 0 or 40, and a strict ASCII locale."""

import pytest
from conftest import fixture_root, report_json, run_doctor

ROOT = str(fixture_root("intel-noavx2-v1-quota"))  # 8 threads on 2 CPUs: PD-CPU-010 fails, exit 1
QUOTA_FILE = "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"
ASCII_LOCALE = {"LC_ALL": "POSIX", "PYTHONUTF8": "0"}
LOCALE_VARIABLES = ("PYTHONIOENCODING", "LANG", "LC_CTYPE", "LANGUAGE")


@pytest.mark.parametrize("columns", ["0", "-5", "wide", "40", "1"])
def test_any_columns_gives_the_whole_report(columns):
    result = run_doctor("--root", ROOT, "--threads", "8", env={"COLUMNS": columns})
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("paddle-doctor ") and "PD-CPU-010" in result.stdout
    assert result.stdout.rstrip().endswith("(exit 1)")
    assert "…" not in result.stdout
    assert QUOTA_FILE in result.stdout  # paths are never cut


def test_a_wide_terminal_is_used():
    result = run_doctor("--root", ROOT, "--threads", "8", env={"COLUMNS": "160"})
    assert max(len(line) for line in result.stdout.splitlines()) > 100


def test_an_ascii_locale_gets_ascii_symbols():
    result = run_doctor("--root", ROOT, "--threads", "8", env=ASCII_LOCALE, unset=LOCALE_VARIABLES)
    assert result.returncode == 1, result.stderr
    assert result.stdout.isascii()
    assert "x FAIL  PD-CPU-010" in result.stdout and "+ pass" in result.stdout
    assert "200000/100000 us" in result.stdout  # µs
    assert result.stdout.rstrip().endswith("(exit 1)")


@pytest.mark.parametrize("args, code", [(["explain", "PD-CPU-010"], 0), (["rules"], 0), (["--root", ROOT, "-q"], None),
                                        (["healthcheck", "--root", ROOT, "--threads", "8"], 1)])
def test_other_commands_in_an_ascii_locale(args, code):
    result = run_doctor(*args, env=ASCII_LOCALE, unset=LOCALE_VARIABLES)
    if code is None:  # the report's exit follows its findings: the same run in JSON says which
        code = report_json(run_doctor(*args[:-1], "--json", unset=LOCALE_VARIABLES))["exit_code"]
    assert result.returncode == code, result.stderr
    assert result.stdout.isascii() and not result.stderr


def test_json_is_the_same_bytes_in_an_ascii_locale():
    utf8 = run_doctor("--root", ROOT, "--json", env={"LC_ALL": "C.UTF-8"})
    ascii_locale = run_doctor("--root", ROOT, "--json", env=ASCII_LOCALE, unset=LOCALE_VARIABLES)
    assert utf8.stdout == ascii_locale.stdout


@pytest.mark.parametrize("detail", [(), ("-v",), ("-q",)])
def test_wrapped_lines_carry_no_trailing_spaces(detail, tmp_path):
    result = run_doctor("--root", ROOT, "--threads", "8", *detail, env={"COLUMNS": "80"})
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) > 70  # the control: lines are wrapped at the width
    assert [line for line in lines if line != line.rstrip()] == []
    written = tmp_path / "report.txt"
    run_doctor("--root", ROOT, "--threads", "8", *detail, "--output", str(written))
    assert [line for line in written.read_text().splitlines() if line != line.rstrip()] == []
