"""examples/: the Dockerfile, the Kubernetes Deployment and the CI jobs, tested without a Docker
engine: every file parses (the Dockerfile with BuildKit's own parser and hadolint, the manifest
against Kubernetes' schemas, the CI files against their published schemas), every paddle-doctor
command in them runs for real, the probe timings fit the healthcheck's budget, and the example
service itself warms up, serves and passes the Dockerfile's HEALTHCHECK.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from collections.abc import Callable
from pathlib import Path

import dockerfile
import kubernetes_validate
import pytest
import yaml
from conftest import REPO, report_with_its_exit, run_doctor
from junitparser import JUnitXml
from paddle_doctor.health.healthcheck import DEFAULT_BUDGET
from paddle_doctor.service import service_from_data

EXAMPLES = REPO / "examples"
DOCKERFILE = EXAMPLES / "Dockerfile"
DEPLOYMENT = EXAMPLES / "kubernetes" / "deployment.yaml"
GITHUB = EXAMPLES / "ci" / "github-actions.yml"
GITLAB = EXAMPLES / "ci" / "gitlab-ci.yml"
ENTRYPOINT = EXAMPLES / "service" / "entrypoint.sh"
SERVICE_YAML = EXAMPLES / "service" / "service.yaml"
BIN = Path(sys.executable).parent
KUBERNETES_VERSION = "1.30"


def instructions(name: str) -> list:
    return [command for command in dockerfile.parse_file(str(DOCKERFILE)) if command.cmd == name]


def docs(path: Path) -> list:
    return list(yaml.safe_load_all(path.read_text()))


def deployment() -> dict:
    return next(doc for doc in docs(DEPLOYMENT) if doc["kind"] == "Deployment")


def container() -> dict:
    (service,) = deployment()["spec"]["template"]["spec"]["containers"]
    return service


def budget_of(argv: list[str]) -> float:
    return float(argv[argv.index("--budget") + 1]) if "--budget" in argv else DEFAULT_BUDGET


def seconds(duration: str) -> float:
    match = re.fullmatch(r"(\d+)(s|m)", duration)
    assert match, duration
    return int(match.group(1)) * (60 if match.group(2) == "m" else 1)


# ------------------------------------------------------------------ the files parse


def test_every_yaml_example_parses():
    found = sorted(EXAMPLES.rglob("*.y*ml"))
    assert {path.name for path in found} >= {"deployment.yaml", "github-actions.yml", "gitlab-ci.yml", "service.yaml"}
    for path in found:
        assert all(doc for doc in docs(path)), path


def test_dockerfile_parses_and_passes_hadolint():
    names = [command.cmd for command in dockerfile.parse_file(str(DOCKERFILE))]
    assert names[0] == "FROM" and {"HEALTHCHECK", "ENTRYPOINT", "VOLUME", "USER"} <= set(names)
    lint = subprocess.run([str(BIN / "hadolint"), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout


def test_hadolint_does_catch_problems():
    """The control for the test above: hadolint is really linting."""
    lint = subprocess.run([str(BIN / "hadolint"), "--no-color", "-"], input="FROM python\nRUN pip install paddlepaddle\n",
                          capture_output=True, text=True, timeout=60)
    assert lint.returncode == 1 and "DL3013" in lint.stdout


def test_kubernetes_manifest_validates_against_the_kubernetes_schemas():
    kinds = []
    for doc in docs(DEPLOYMENT):
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        kinds.append(doc["kind"])
    assert kinds == ["ConfigMap", "PersistentVolumeClaim", "Deployment"]
    broken = deployment()
    broken["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["periodSecond"] = 30
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("path, schema", [(GITHUB, "vendor.github-workflows"), (GITLAB, "vendor.gitlab-ci")])
def test_ci_files_validate_against_their_schemas(path, schema, tmp_path):
    check = [str(BIN / "check-jsonschema"), "--builtin-schema", schema]
    result = subprocess.run([*check, str(path)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = tmp_path / path.name
    broken.write_text(path.read_text().replace("stage: doctor", "stages: doctor").replace("timeout-minutes", "timeout-minute"))
    assert subprocess.run([*check, str(broken)], capture_output=True, timeout=120).returncode == 1


def stages() -> dict[str, list]:
    """The Dockerfile's instructions by stage: its name (``AS name``), "service" for the last, the default target."""
    found: list[list] = []
    for command in dockerfile.parse_file(str(DOCKERFILE)):
        if command.cmd == "FROM":
            found.append([])
        found[-1].append(command)
    named = {stage[0].value[-1]: stage for stage in found[:-1] if stage[0].value[-2:-1] == ("AS",)}
    return {**named, "service": found[-1]}


def test_the_images_build_from_this_checkout_and_copy_only_what_their_context_keeps():
    built = stages()
    assert list(built) == ["doctor-wheel", "fleet", "service"]
    for name in ("fleet", "service"):
        assert any(c.cmd == "COPY" and "--from=doctor-wheel" in c.flags for c in built[name]), name
        assert not any("paddle-doctor==" in " ".join(c.value) for c in built[name] if c.cmd == "RUN")  # no index serves it here
    sources = [source for stage in built.values() for c in stage if c.cmd == "COPY" and not c.flags for source in c.value[:-1]]
    assert all((REPO / source).exists() for source in sources), sources
    kept = [line for line in (EXAMPLES / "Dockerfile.dockerignore").read_text().splitlines() if line.startswith("!")]
    for source in sources:  # every file the images copy is in the context the ignore file leaves
        assert any(source.rstrip("/").startswith(line[1:].rstrip("/")) for line in kept), source


def image_folders(tmp_path) -> Callable[[str], str]:
    image = {"/src": tmp_path / "src", "/wheels": tmp_path / "wheels", "/tmp/wheels": tmp_path / "wheels"}

    def mapped(text: str) -> str:
        for folder in sorted(image, key=len, reverse=True):
            text = re.sub(rf"(?<![\w/]){re.escape(folder)}(?=/|\s|$)", str(image[folder]), text)
        return text

    return mapped


def build_the_wheel_stage(mapped: Callable[[str], str]) -> None:
    """The wheel stage's COPY and RUN as written, its folders mapped by ``mapped``."""
    for command in stages()["doctor-wheel"]:
        if command.cmd == "COPY":
            *sources, target = command.value
            for source in sources:
                destination = Path(mapped(target)) / ("" if source.endswith("/") else Path(source).name)
                if source.endswith("/"):
                    shutil.copytree(REPO / source, destination, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
                else:
                    destination.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(REPO / source, destination)
        elif command.cmd == "RUN":
            built = subprocess.run(["sh", "-c", mapped(command.value[0])], capture_output=True, text=True, timeout=600,
                                   env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"})
            assert built.returncode == 0, built.stderr[-2000:]


@pytest.mark.slow  # builds a wheel and installs it into fresh venvs
def test_the_dockerfiles_paddle_doctor_steps_work_from_this_checkout(tmp_path):
    """The wheel stage, then each image's install step up to its first `&&` but one that removes the
    wheels, run as written with the image's folders mapped into a temporary one (no Docker engine here)."""
    mapped = image_folders(tmp_path)
    build_the_wheel_stage(mapped)
    assert len(list((tmp_path / "wheels").glob("paddle_doctor-*.whl"))) == 1
    for name, extra_import in (("service", None), ("fleet", "kubernetes")):
        fresh = tmp_path / f"{name}-venv"
        venv.create(fresh, with_pip=True)
        (install,) = [c for c in stages()[name] if c.cmd == "RUN" and "/tmp/wheels/" in c.value[0]]
        steps = [step for step in install.value[0].split("&&") if "pip install" in step or step.strip().startswith("set --")]
        installed = subprocess.run(["sh", "-c", mapped(" && ".join(steps))], capture_output=True, text=True, timeout=600,
                                   env={**os.environ, "PATH": f"{fresh / 'bin'}:{os.environ['PATH']}"})
        assert installed.returncode == 0, (name, installed.stderr[-2000:])
        version = subprocess.run([str(fresh / "bin" / "paddle-doctor"), "--version"], capture_output=True, text=True, timeout=60)
        assert version.returncode == 0 and version.stdout.strip() == "paddle-doctor, version 0.1.0", (name, version)
        if extra_import:
            assert subprocess.run([str(fresh / "bin" / "python"), "-c", f"import {extra_import}"], timeout=60).returncode == 0


def test_the_kubernetes_examples_run_the_images_built_here_without_pulling_them():
    built = re.search(r"docker build -f examples/Dockerfile -t (\S+) \.", DOCKERFILE.read_text())
    assert built, "the Dockerfile says how to build it"
    assert container()["image"] == built.group(1) and not built.group(1).endswith(":latest")
    assert container()["imagePullPolicy"] == "IfNotPresent"
    assert built.group(0) in (EXAMPLES / "README.md").read_text()
    fleet_built = re.search(r"docker build -f examples/Dockerfile --target fleet -t (\S+) \.", DOCKERFILE.read_text())
    job = next(doc for doc in docs(EXAMPLES / "kubernetes" / "fleet.yaml") if doc["kind"] == "Job")
    (fleet,) = job["spec"]["template"]["spec"]["containers"]
    assert fleet_built and fleet["image"] == fleet_built.group(1) and fleet["imagePullPolicy"] == "IfNotPresent"
    for ci in (GITHUB, GITLAB):
        assert "docker build -f examples/Dockerfile -t " in ci.read_text() and " examples/\n" not in ci.read_text(), ci


# ------------------------------------------------------------------ the commands in them are real


SHELL_OPERATORS = ("||", "&&", ";", "|", ">", ">>")


def shell_commands(text: str) -> list[list[str]]:
    """paddle-doctor command lines in shell text (continuations joined, comments skipped, up to a shell operator)."""
    found = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.strip().startswith("#") or "paddle-doctor " not in line:
            continue
        words = shlex.split(line)
        if "paddle-doctor" in words:
            command = words[words.index("paddle-doctor"):]
            end = next((i for i, word in enumerate(command) if word in SHELL_OPERATORS), len(command))
            found.append(command[:end])
    return found


def yaml_commands(node, key: str | None = None) -> list[list[str]]:
    """paddle-doctor commands in YAML: exec arrays (a probe's command) and the shell of run/script keys."""
    if isinstance(node, dict):
        return [command for name, value in node.items() for command in yaml_commands(value, name)]
    if isinstance(node, list):
        if node and node[0] == "paddle-doctor":
            return [list(node)]
        return [command for item in node for command in yaml_commands(item, key)]
    return shell_commands(node) if isinstance(node, str) and key in ("run", "script") else []


def example_commands() -> dict[str, list[list[str]]]:
    (healthcheck,) = instructions("HEALTHCHECK")
    return {
        "Dockerfile": [list(healthcheck.value[1:])],
        "entrypoint.sh": shell_commands(ENTRYPOINT.read_text()),
        "deployment.yaml": [command for doc in docs(DEPLOYMENT) for command in yaml_commands(doc)],
        "github-actions.yml": yaml_commands(docs(GITHUB)[0]),
        "gitlab-ci.yml": yaml_commands(docs(GITLAB)[0]),
    }


def test_commands_are_found_in_every_example():
    commands = example_commands()
    assert all(commands.values()), commands
    assert commands["entrypoint.sh"] == [["paddle-doctor", "baseline", "--config", "$CONFIG", "--out", "$BASELINE"]]
    for name in ("github-actions.yml", "gitlab-ci.yml"):
        probe, summary, junit = commands[name]  # the container probed once, both reports rendered from its facts
        assert probe[1] == "facts" and probe[probe.index("--output") + 1] == summary[summary.index("--facts") + 1]
        assert " ".join(summary).count("--format markdown --output") == 1, summary
        assert " ".join(junit).count("--format junit --fail-on warning --output") == 1, junit


def test_ci_jobs_publish_the_files_paddle_doctor_writes():
    _, gl_summary, gl_junit = example_commands()["gitlab-ci.yml"]
    artifacts = docs(GITLAB)[0]["paddle-doctor"]["artifacts"]
    assert artifacts["reports"]["junit"] == gl_junit[gl_junit.index("--output") + 1]
    assert gl_summary[gl_summary.index("--output") + 1] in artifacts["paths"]
    _, gh_summary, gh_junit = example_commands()["github-actions.yml"]
    steps = docs(GITHUB)[0]["jobs"]["doctor"]["steps"]
    published = next(step for step in steps if "junit-report" in step.get("uses", ""))
    assert gh_junit[gh_junit.index("--output") + 1] == "/reports/paddle-doctor.xml"
    assert published["with"]["report_paths"] == "reports/paddle-doctor.xml"  # -v "$PWD/reports:/reports"
    assert gh_summary[gh_summary.index("--output") + 1] == "/reports/paddle-doctor.md"
    assert any('cat reports/paddle-doctor.md >> "$GITHUB_STEP_SUMMARY"' in step.get("run", "") for step in steps)


@pytest.mark.slow  # the live container, Paddle imported
def test_every_paddle_doctor_command_in_the_examples_runs(tmp_path):
    """Each command runs with the container paths mapped into a temporary directory."""
    config = tmp_path / "service.yaml"
    config.write_text(SERVICE_YAML.read_text().replace("/cache/paddle", str(tmp_path / "cache")))
    paths = {
        "$CONFIG": str(config), "/srv/service.yaml": str(config),
        "$BASELINE": str(tmp_path / "baseline.json"), "/var/lib/paddle-doctor/baseline.json": str(tmp_path / "baseline.json"),
        "/reports/paddle-doctor.xml": str(tmp_path / "github.xml"), "paddle-doctor.xml": str(tmp_path / "gitlab.xml"),
        "/reports/facts.json": str(tmp_path / "github-facts.json"), "facts.json": str(tmp_path / "gitlab-facts.json"),
        "/reports/paddle-doctor.md": str(tmp_path / "github.md"), "paddle-doctor.md": str(tmp_path / "gitlab.md"),
    }
    commands = [(name, [paths.get(word, word) for word in command[1:]])
                for name, found in example_commands().items() for command in found]
    # the entrypoint's baseline first, then each CI file's facts before the reports rendered from them
    commands.sort(key=lambda item: (item[1][:1] != ["baseline"], item[1][:1] != ["facts"]))
    for name, args in commands:
        result = run_doctor(*args)
        if args[0] in ("baseline", "facts"):
            assert result.returncode == 0, (name, result.stderr)
        elif args[0] == "healthcheck":  # against the baseline just recorded here, with the same service
            assert result.returncode == 0 and result.stdout.startswith("healthy: "), (name, result)
            assert len(result.stdout.splitlines()) == 1
        else:
            assert result.returncode == exit_code_of_its_findings(args), (name, result.stderr)
            output = Path(args[args.index("--output") + 1])
            if "markdown" in args:
                assert output.read_text().startswith("#")
            else:
                assert JUnitXml.fromfile(str(output)).tests > 0
    subcommands = {args[0] if args[0] in ("baseline", "healthcheck", "facts") else "check" for _, args in commands}
    assert subcommands == {"baseline", "healthcheck", "facts", "check"}


def exit_code_of_its_findings(args: list[str]) -> int:
    """The exit code the JSON report of the same command gives: its findings against its --fail-on."""
    as_json, words = [], iter(args)
    for word in words:
        if word in ("--format", "--output"):
            next(words)
        else:
            as_json.append(word)
    return report_with_its_exit(run_doctor(*as_json, "--json"))["exit_code"]


# ------------------------------------------------------------------ timings and resources


def test_dockerfile_healthcheck_timings_fit_the_healthcheck(tmp_path):
    (healthcheck,) = instructions("HEALTHCHECK")
    flags = dict(flag.lstrip("-").split("=", 1) for flag in healthcheck.flags)
    interval, timeout, start = seconds(flags["interval"]), seconds(flags["timeout"]), seconds(flags["start-period"])
    command = list(healthcheck.value[1:])
    budget = budget_of(command)
    assert budget < timeout < interval and int(flags["retries"]) >= 2 and start >= 60
    # the measured healthcheck, against a baseline of this machine, fits well inside the timeout
    baseline = tmp_path / "baseline.json"
    assert run_doctor("baseline", "--no-paddle", "--out", str(baseline)).returncode == 0
    started = time.perf_counter()
    result = run_doctor(*[str(baseline) if word.endswith("baseline.json") else word for word in command[1:]])
    assert result.returncode == 0 and result.stdout.startswith("healthy: "), result  # against its own baseline
    assert time.perf_counter() - started < timeout


def test_kubernetes_probes_fit_the_healthcheck_budget():
    probes = {name: container()[name] for name in ("startupProbe", "readinessProbe", "livenessProbe")}
    for name, probe in probes.items():
        command = probe["exec"]["command"]
        assert command[:2] == ["paddle-doctor", "healthcheck"], name
        assert budget_of(command) < probe["timeoutSeconds"] <= probe["periodSeconds"], name
    startup = probes["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 120  # time for the import, warm-up and baseline


def test_kubernetes_cpu_limit_matches_threads_and_the_cache_is_on_a_volume():
    configmap = next(doc for doc in docs(DEPLOYMENT) if doc["kind"] == "ConfigMap")
    service = service_from_data(yaml.safe_load(configmap["data"]["service.yaml"]), "ConfigMap paddle-service")
    resources = container()["resources"]
    assert float(resources["limits"]["cpu"]) == float(resources["requests"]["cpu"]) == service.threads * service.instances
    env = {item["name"]: item["value"] for item in container()["env"]}
    # the pools beside the predictor take its own thread count (tests/test_thread_advice.py)
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == str(service.threads)
    mounts = {mount["mountPath"]: mount["name"] for mount in container()["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in deployment()["spec"]["template"]["spec"]["volumes"]}
    assert "persistentVolumeClaim" in volumes[mounts[service.optim_cache_dir]]
    assert env.get("SERVICE_CONFIG", "").startswith(next(path for path, name in mounts.items() if name == "config"))


def test_the_image_and_the_deployment_use_the_same_service_config():
    configmap = next(doc for doc in docs(DEPLOYMENT) if doc["kind"] == "ConfigMap")
    assert yaml.safe_load(configmap["data"]["service.yaml"]) == yaml.safe_load(SERVICE_YAML.read_text())


# ------------------------------------------------------------------ the example service, end to end


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_line(process: subprocess.Popen, prefix: str, timeout: float) -> str:
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.startswith(prefix):
            return line
        seen.append(line)
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"no line starting with {prefix!r}; exit code {process.poll()}; output:\n{''.join(seen[-30:])}")


@pytest.mark.slow  # a real Paddle service
def test_the_example_service_warms_up_serves_and_passes_the_dockerfile_healthcheck(tmp_path):
    model = tmp_path / "model"
    built = subprocess.run([sys.executable, str(EXAMPLES / "service" / "make_model.py"), str(model)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    config = tmp_path / "service.yaml"
    config.write_text(SERVICE_YAML.read_text().replace("/srv/model/inference", str(model / "inference"))
                      .replace("/cache/paddle", str(tmp_path / "cache")))
    baseline = tmp_path / "baseline.json"
    port = free_port()
    env = {**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}", "SERVICE_CONFIG": str(config), "PORT": str(port),
           "PADDLE_DOCTOR_BASELINE": str(baseline), "SERVE": str(EXAMPLES / "service" / "serve.py")}
    service = subprocess.Popen(["sh", str(ENTRYPOINT)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=env, start_new_session=True)
    try:
        wait_for_line(service, "serve: listening", timeout=300)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=10) as ready:
            assert ready.status == 200
        request = urllib.request.Request(f"http://127.0.0.1:{port}/predict", method="POST",
                                         data=json.dumps({"inputs": [[[[0.5] * 32] * 32] * 3]}).encode())
        with urllib.request.urlopen(request, timeout=30) as answer:
            assert len(json.loads(answer.read())["outputs"][0]) == 4
        recorded = json.loads(baseline.read_text())
        assert recorded["cpu"]["threads"] == 2 and recorded["service"]["warmup_runs"] == 5
        assert recorded["cache"]["path"] == str(tmp_path / "cache")
        assert recorded["paddle"]["status"] == "ok"
        (healthcheck,) = instructions("HEALTHCHECK")
        command = [str(baseline) if word.endswith("baseline.json") else word for word in healthcheck.value[2:]]
        result = run_doctor(*command)
        assert result.returncode == 0 and result.stdout.startswith("healthy: "), result.stdout
    finally:
        if service.poll() is None:
            os.killpg(service.pid, signal.SIGTERM)
        service.wait(timeout=30)
