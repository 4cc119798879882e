"""Source: when the service's code enables TensorRT, does it keep the engines it builds?"""

from __future__ import annotations

from paddle_doctor.facts import Facts, SourceSetting
from paddle_doctor.judge.findings import Finding
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import settings_finding, settings_set_to

RULE = "PD-SRC-003"


def check(facts: Facts) -> list[Finding]:
    found: list[tuple[SourceSetting, str | None]] = [
        (setting, "enable_tensorrt_engine(use_static=False)") for setting in settings_set_to(facts, "tensorrt.use_static", False)]
    enabled = settings_set_to(facts, "tensorrt.enabled", True)
    has_cache_dir = any(setting.name == "optim_cache_dir" for setting in facts.service_source.settings)
    if enabled and not has_cache_dir:
        found.extend((setting, "TensorRT enabled, and no set_optim_cache_dir() anywhere") for setting in enabled)
    return settings_finding(facts, RULE, found, "the service's code lets TensorRT rebuild its engines at every start",
                          "use_static=True and set_optim_cache_dir(persistent folder)",
                          "the service's code keeps its TensorRT engines, or does not use TensorRT")


CHECK = Check(name="source_trt_cache", rules=(RULE,), run=check, requires=(Need.SOURCE,))
