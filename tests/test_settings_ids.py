"""--ignore and settings files: an empty entry ignores nothing; an id that names no rule is a usage error."""

import pytest
from conftest import fixture_root, run_doctor

QUOTA_ROOT = "intel-noavx2-v1-quota"  # 2-CPU quota: 8 threads fail PD-CPU-010 (an error)


def doctor_exit(*args: str):
    return run_doctor("--json", "--root", str(fixture_root(QUOTA_ROOT)), "--threads", "8", *args)


@pytest.mark.parametrize("ignore", ["", "  "])
def test_an_empty_ignore_ignores_nothing(ignore):
    result = doctor_exit("--ignore", ignore)
    assert result.returncode == 1, result.stderr


def test_an_empty_entry_in_the_settings_ignore_ignores_nothing(tmp_path):
    settings = tmp_path / "doctor.yaml"
    settings.write_text('ignore: [""]\n')
    assert doctor_exit("--settings", str(settings)).returncode == 1


def test_ignore_ids_are_matched_whatever_their_case():
    assert doctor_exit("--ignore", "pd-cpu-010").returncode == 0


@pytest.mark.parametrize("ignore", ["PD-CPU-999", "PD-NOPE", "CPU"])
def test_an_ignore_that_matches_no_rule_is_a_usage_error(ignore):
    result = doctor_exit("--ignore", ignore)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "--ignore" in result.stderr and repr(ignore) in result.stderr
    assert not result.stdout


@pytest.mark.parametrize("ignore", ["P", "PD", "pd-"])
def test_an_ignore_that_would_ignore_every_rule_is_a_usage_error(ignore):
    """CI with ``--ignore "$PREFIX"`` must not pass whatever the doctor finds."""
    result = doctor_exit("--ignore", ignore)
    assert result.returncode == 2 and "would ignore every rule" in result.stderr and result.stderr.count("\n") == 1
    assert doctor_exit("--ignore", "PD-GPU").returncode == 1  # an area still is a fine prefix


@pytest.mark.parametrize("text, named", [
    ("ignore: [PD-GPU, PD-TYPO-001]\n", "'PD-TYPO-001'"),
    ("severity:\n  PD-CPU-999: info\n", "'PD-CPU-999'"),
])
def test_a_settings_file_naming_no_rule_is_a_usage_error(tmp_path, text, named):
    settings = tmp_path / "doctor.yaml"
    settings.write_text(text)
    for command in (["check"], ["baseline", "--out", str(tmp_path / "baseline.json")]):
        result = run_doctor(*command, "--root", str(fixture_root(QUOTA_ROOT)), "--settings", str(settings))
        assert result.returncode == 2
        assert str(settings) in result.stderr and named in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "baseline.json").exists()


def test_severity_overrides_apply_whatever_the_case_of_their_id(tmp_path):
    settings = tmp_path / "doctor.yaml"
    settings.write_text("severity:\n  pd-cpu-010: info\n")
    assert doctor_exit("--settings", str(settings)).returncode == 0
