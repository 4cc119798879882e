"""One pod's ``paddle-doctor --json`` report, reduced to what the fleet compares, and the pods that
could not be diagnosed. Reports come from files or folders, or from the Kubernetes collector."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from ..base.schema import RuleId
from ..base.serde import DecodeError, from_data, load_json_file
from ..base.vocabulary import Severity, Status
from ..report.profile import Profile
from ..report.report import SCHEMA_VERSION

EXPECTED = "expected the output of 'paddle-doctor --json'"


class FleetError(ValueError):
    """Reports or a cluster the fleet cannot use; the message names what and what was expected."""


class Unreachable(str, Enum):
    """Why a pod has no report."""

    NOT_RUNNING = "not_running"
    NO_DOCTOR = "no_doctor"
    FORBIDDEN = "forbidden"
    TIMEOUT = "timeout"
    FAILED = "failed"
    STOPPED = "stopped"  # the fleet itself was stopped (SIGTERM, SIGINT, SIGHUP) before this pod was diagnosed


@dataclass(frozen=True)
class PodFacts:
    """The facts pods are grouped by; each field's label is how the fleet report names it."""

    cpu: str = field(metadata={"label": "CPU"})
    isa: str = field(metadata={"label": "ISA"})
    cpu_budget: str = field(metadata={"label": "CPU budget"})
    threads: str = field(metadata={"label": "threads x instances"})
    paddle_build: str = field(metadata={"label": "Paddle build"})
    gpu_driver: str = field(metadata={"label": "GPU driver"})
    cuda_driver: str = field(metadata={"label": "CUDA (driver)"})
    tensorrt: str = field(metadata={"label": "TensorRT"})
    cache: str = field(metadata={"label": "cache"})


@dataclass(frozen=True)
class PodFinding:
    """One finding of one pod; pods agree on a finding when rule, status and severity agree."""

    rule_id: RuleId
    status: Status
    severity: Severity
    title: str
    message: str

    @property
    def identity(self) -> tuple[str, str, str]:
        return self.rule_id, self.status, self.severity


@dataclass
class PodReport:
    """A pod, where its report came from, and what the fleet compares of it."""

    pod: str
    node: str | None
    source: str
    facts: PodFacts
    findings: list[PodFinding]


@dataclass
class Unreached:
    """A pod without a report, and why."""

    pod: str
    node: str | None
    reason: Unreachable
    detail: str


def pod_report(data: Any, pod: str, source: str, node: str | None = None) -> PodReport:
    """The parsed JSON of one report as a PodReport, or FleetError naming ``source`` and what is wrong."""
    tool = data.get("tool") if isinstance(data, dict) else None
    if not isinstance(tool, dict) or tool.get("name") != "paddle-doctor":
        raise FleetError(f"{source}: not a paddle-doctor report; {EXPECTED}")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise FleetError(f"{source}: report schema_version is {data.get('schema_version')!r}, "
                         f"this paddle-doctor reads {SCHEMA_VERSION}; {EXPECTED} of this version")
    try:
        host = data["host"]
        profile = from_data(Profile, data["profile"], "profile") if data.get("profile") is not None else None
        findings = [PodFinding(f["rule_id"], Status(f["status"]), Severity(f["severity"]), f["title"], f["message"]) for f in data["findings"]]
        facts = pod_facts(host, profile)
    except (KeyError, TypeError, AttributeError, ValueError, DecodeError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise FleetError(f"{source}: not a complete paddle-doctor report ({what}); {EXPECTED}") from None
    return PodReport(pod, node, source, facts, sorted(findings, key=lambda f: f.rule_id))


def pod_facts(host: dict[str, Any], profile: Profile | None) -> PodFacts:
    """Reports of doctors older than the profile compare on the host summary alone ('unknown' for the rest)."""
    budget = host["cpu_budget"]

    def said(value: object) -> str:
        return "unknown" if profile is None else ("none" if value is None else str(value))

    return PodFacts(
        cpu=f"{host['cpu_model'] or 'unknown'} ({host['cpu_arch'] or '?'})",
        isa=" ".join(host["cpu_flags"]) or "none",
        cpu_budget=f"{budget:g} CPUs" if budget is not None else "unknown",
        threads=said(profile and f"{profile.threads} x {profile.instances}"),
        paddle_build=said(profile and profile.paddle_build),
        gpu_driver=said(profile and profile.gpu_driver),
        cuda_driver=said(profile and profile.cuda_driver),
        tensorrt=said(profile and profile.tensorrt),
        cache=said(profile and profile.cache),
    )


def report_files(paths: list[str]) -> list[Path]:
    """Each path a report file, or a folder whose ``*.json`` files are reports; FleetError when none is found."""
    files: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise FleetError(f"{given}: no *.json reports in this folder; {EXPECTED}, one file per pod")
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            raise FleetError(f"{given}: no such file or folder; expected reports from 'paddle-doctor --json'")
    unique = {file.resolve(): file for file in reversed(files)}  # a file named twice is one pod
    return [file for file in files if unique.get(file.resolve()) is file]


def read_reports(paths: list[str]) -> list[PodReport]:
    """The reports in files and folders, each pod named after its file (the path, where two share a name)."""
    files = report_files(paths)
    stems = [file.stem for file in files]
    reports = []
    for file, stem in zip(files, stems):
        pod = stem if stems.count(stem) == 1 else str(file)
        reports.append(pod_report(load_json_file(file, FleetError, "report", EXPECTED), pod, str(file)))
    return reports
