"""--config service.yaml: the service's Paddle Config as data, with flags on top."""

import json

import pytest
from conftest import fixture_root, report_json, run_doctor, statuses
from paddle_doctor.service import ServiceConfigError, service_from_data


def test_full_config_is_read_and_flags_override_it(tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text(
        "batch_size: 4\nthreads: 8\ninstances: 2\nonednn: false\nprecision: fp32\n"
        "tensorrt:\n  enabled: true\n  use_static: true\n  precision: fp16\n"
    )
    facts = json.loads(run_doctor("facts", "--no-paddle", "--config", str(config), "--instances", "1").stdout)
    service = facts["service"]
    assert (service["batch_size"], service["threads"], service["instances"], service["onednn"]) == (4, 8, 1, False)
    assert service["tensorrt"] == {**service["tensorrt"], "enabled": True, "use_static": True, "precision": "fp16"}


def test_config_drives_the_checks(tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text("threads: 8\nonednn: false\n")
    report = report_json(run_doctor("--json", "--root", str(fixture_root("intel-avx512-v2-max")), "--config", str(config)))
    assert statuses(report)["PD-CPU-004"] == "fail"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"threads": "eight"}, "service.threads: expected int"),
        ({"threads": 0}, "field 'threads' is 0"),
        ({"device": "tpu"}, "service.device: is 'tpu'; expected one of 'cpu', 'gpu'"),
        ({"precision": "fp8"}, "service.precision: is 'fp8'; expected one of 'fp32', 'bf16', 'fp16', 'int8'"),
        ({"tensorrt": {"precision": "fp4"}}, "service.tensorrt.precision: is 'fp4'"),
        ({"thread": 4}, "unknown field 'thread'"),
        ({"warmup_runs": -1}, "field 'warmup_runs'"),
    ],
)
def test_bad_service_config_names_the_field(data, message):
    with pytest.raises(ServiceConfigError) as error:
        service_from_data(data, "service.yaml")
    assert message in str(error.value) and str(error.value).startswith("service.yaml: ")


def test_bad_service_config_is_a_one_line_usage_error(tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text("threads: [1, 2]\n")
    result = run_doctor("--no-paddle", "--config", str(config))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "service.threads" in result.stderr
