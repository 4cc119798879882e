"""The pipeline from typed options to finished Facts: the service's process, source, record and
flags read once, merged by the one resolve function, and the Facts built whole."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from conftest import FIXTURES, ROOTS
from paddle_doctor.base.vocabulary import Layout, Origin
from paddle_doctor.health.healthcheck import parse_args
from paddle_doctor.pipeline import ProbeOptions, collect, from_file
from paddle_doctor.service import ServiceOptions
from paddle_doctor.service.resolve import resolve_service

PROCESSES = FIXTURES / "processes"


class Lines:
    """A Reporter that keeps what the pipeline says, and never shows a progress bar."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def say(self, line: str) -> None:
        self.lines.append(line)

    @contextmanager
    def measuring(self, budget_s: float) -> Iterator[None]:
        yield None


def test_the_facts_judge_the_affinity_of_the_service_process_read():
    options = ProbeOptions(root=str(PROCESSES / "one-service"), pid=4242, no_paddle=True, gpu=False)
    reporter = Lines()
    facts = collect(options, reporter)
    assert facts.service_process.pid == 4242
    assert (facts.process.affinity, facts.process.affinity_source) == ([0, 1, 2, 3], "/proc/4242/status")
    assert any("no record of process 4242" in line for line in reporter.lines), reporter.lines


def test_without_a_process_the_facts_keep_the_affinity_probed():
    root = ROOTS / "intel-avx512-v2-max"
    facts = collect(ProbeOptions(root=str(root), no_paddle=True, gpu=False, service=ServiceOptions(threads=3)), Lines())
    assert facts.service_process.status == "not_probed" and facts.process.affinity_source != "/proc/4242/status"
    assert facts.service.threads == 3
    assert [(o.name, o.origin, o.detail) for o in facts.service_origins] == [("threads", Origin.FLAG, "--threads")]


def test_the_model_measured_is_the_services_model_over_what_its_config_names(tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text("model: ./in-config\nthreads: 2\n")
    service, origins = resolve_service(ServiceOptions(config=str(config), model="./measured"))
    assert (service.model, service.threads) == ("./measured", 2)
    assert {o.name: (o.origin, o.detail) for o in origins} == {"model": (Origin.FLAG, "--model"), "threads": (Origin.CONFIG, str(config))}
    service, _ = resolve_service(ServiceOptions(config=str(config)))
    assert service.model == "./in-config"


def test_the_healthcheck_and_check_build_the_service_from_the_same_typed_options(tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text("threads: 8\ninstances: 2\nlayout: processes\n")
    options = parse_args(["--config", str(config), "--threads", "3"])
    assert options.service == ServiceOptions(config=str(config), threads=3)
    service, origins = resolve_service(options.service)
    assert (service.threads, service.instances, service.layout) == (3, 2, Layout.PROCESSES)
    assert {o.name: o.detail for o in origins} == {"threads": "--threads", "instances": str(config), "layout": str(config)}


def test_recorded_facts_are_judged_with_the_flags_given_now(tmp_path):
    recorded = collect(ProbeOptions(root=str(ROOTS / "intel-avx512-v2-max"), no_paddle=True, gpu=False,
                                    service=ServiceOptions(threads=8, instances=2)), Lines())
    path = tmp_path / "facts.json"
    path.write_text(recorded.to_json())
    facts = from_file(str(path), ServiceOptions(threads=2))
    assert (facts.service.threads, facts.service.instances) == (2, 2)
    assert {o.name: o.value for o in facts.service_origins} == {"threads": 2, "instances": 2}
