"""paddle-doctor fleet --kubernetes against the official client's real API classes and wire protocol,
served by a stand-in API server on 127.0.0.1 (tests/fake_kube.py); and the in-cluster Job and RBAC
example, validated against the Kubernetes schemas and run against the stand-in."""

from __future__ import annotations

import html
import json
import re
import shlex
import signal
import socket
import time

import jsonschema
import kubernetes.config
import kubernetes.stream  # noqa: F401
import kubernetes_validate
import pytest
import yaml
from conftest import REPO, fixture_root, run_doctor, run_doctor_process
from fake_kube import FakeCluster, FakePod, SilentServer, kubeconfig
from kubernetes.client import CoreV1Api  # noqa: F401  (the client loads its API classes when first named: seconds)
from process_tree import RunningDoctor

FLEET_SCHEMA = json.loads((REPO / "doctor" / "schemas" / "fleet.schema.json").read_text())
FLEET_EXAMPLE = REPO / "examples" / "kubernetes" / "fleet.yaml"
DEPLOYMENT = REPO / "examples" / "kubernetes" / "deployment.yaml"
KUBERNETES_VERSION = "1.30"


@pytest.fixture(scope="module")
def reports() -> dict[str, str]:
    """What `paddle-doctor --json` prints in two alike pods and in one with 8 threads under half a CPU."""
    def report(root: str, *service: str) -> str:
        result = run_doctor("--root", str(fixture_root(root)), *service, "--json", unset=("OMP_NUM_THREADS", "MKL_NUM_THREADS"))
        return result.stdout

    return {"alike": report("intel-avx512-v2-max", "--threads", "4", "--instances", "2"),
            "oversubscribed": report("intel-avx512-v2-halfcpu", "--threads", "8")}


def fleet_pods(reports: dict[str, str], labels: dict[str, str] | None = None) -> list[FakePod]:
    labels = labels or {"app": "ocr"}
    return [FakePod("ocr-a", reports["alike"], node="pool-a-1", labels=labels),
            FakePod("ocr-b", reports["alike"], node="pool-a-2", labels=labels),
            FakePod("ocr-c", reports["oversubscribed"], exit_code=1, node="pool-b-1", labels=labels),
            FakePod("ocr-nodoctor", missing=True, labels=labels),
            FakePod("ocr-rbac", forbidden=True, labels=labels),
            FakePod("ocr-slow", hang=True, labels=labels),
            FakePod("ocr-pending", phase="Pending", labels=labels),
            FakePod("ocr-broken", exit_code=2, stderr="paddle-doctor: error: --config /x: not found\n", labels=labels),
            FakePod("other", reports["alike"], labels={"app": "other"})]


def test_every_pod_is_diagnosed_or_listed_with_why_not(tmp_path, reports):
    with FakeCluster(fleet_pods(reports)) as cluster:
        saved = tmp_path / "saved"
        result = run_doctor("fleet", "--kubernetes", "-n", "serving", "-l", "app=ocr", "--kubeconfig",
                            str(cluster.kubeconfig(tmp_path / "kubeconfig")), "--pod-timeout", "2", "--save", str(saved), "--json")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    jsonschema.validate(report, FLEET_SCHEMA)
    usual, outlier = report["groups"]
    assert usual["pods"] == ["ocr-a", "ocr-b"] and usual["nodes"] == ["pool-a-1", "pool-a-2"]
    assert outlier["pods"] == ["ocr-c"] and outlier["nodes"] == ["pool-b-1"]
    assert "PD-CPU-010" in {d["what"] for d in outlier["differences"]}
    why = {u["pod"]: (u["reason"], u["detail"]) for u in report["unreached"]}
    assert {pod: reason for pod, (reason, _) in why.items()} == {
        "ocr-nodoctor": "no_doctor", "ocr-rbac": "forbidden", "ocr-slow": "timeout",
        "ocr-pending": "not_running", "ocr-broken": "failed"}
    assert "executable file not found" in why["ocr-nodoctor"][1] and "pods/exec" in why["ocr-rbac"][1]
    assert "exited 2: paddle-doctor: error: --config /x: not found" in why["ocr-broken"][1]
    assert report["pods"] == 8 and report["problem_pods"] == ["ocr-c"]
    # the pending pod is never exec'd, the pod outside the selector neither; each exec names the container
    assert sorted(pod for pod, _, _ in cluster.execs) == ["ocr-a", "ocr-b", "ocr-broken", "ocr-c", "ocr-nodoctor", "ocr-rbac", "ocr-slow"]
    assert {(container, tuple(command)) for _, container, command in cluster.execs} == {("service", ("paddle-doctor", "--json"))}
    # what was collected reads back as files, grouped the same
    assert sorted(path.name for path in saved.iterdir()) == ["ocr-a.json", "ocr-b.json", "ocr-c.json"]
    again = json.loads(run_doctor("fleet", str(saved), "--json").stdout)
    assert [group["pods"] for group in again["groups"]] == [["ocr-a", "ocr-b"], ["ocr-c"]]


def test_no_more_pods_than_parallel_are_exec_d_at_once(tmp_path):
    pods = [FakePod(f"slow-{index}", hang=True) for index in range(4)]
    with FakeCluster(pods) as cluster:
        result = run_doctor("fleet", "--kubernetes", "-n", "serving", "-l", "app=ocr", "--kubeconfig",
                            str(cluster.kubeconfig(tmp_path / "kubeconfig")), "--pod-timeout", "1", "--parallel", "2", "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 1 and {u["reason"] for u in report["unreached"]} == {"timeout"}
    assert len(cluster.execs) == 4 and cluster.most_running == 2


def test_the_namespace_defaults_to_the_kubeconfig_context_s(tmp_path, reports):
    pods = [FakePod("ocr-a", reports["alike"], labels={"app": "ocr"})]
    with FakeCluster(pods, namespace="serving") as cluster:
        result = run_doctor("fleet", "--kubernetes", "-l", "app=ocr", "--json",
                            "--kubeconfig", str(cluster.kubeconfig(tmp_path / "kubeconfig", namespace="serving")))
    assert "Traceback" not in result.stderr, result.stderr
    assert [group["pods"] for group in json.loads(result.stdout)["groups"]] == [["ocr-a"]]
    assert [pod for pod, _, _ in cluster.execs] == ["ocr-a"]


@pytest.mark.parametrize("cluster_args, selector, expected", [
    ({"list_forbidden": True}, "app=ocr", "cannot list pods in namespace 'serving': 403 Forbidden; expected get/list on pods"),
    ({}, "app=nothing", "no pods match -l 'app=nothing' in namespace 'serving'"),
])
def test_a_cluster_that_cannot_be_used_is_one_line_and_exit_2(tmp_path, cluster_args, selector, expected):
    with FakeCluster([FakePod("ocr-a")], **cluster_args) as cluster:
        result = run_doctor("fleet", "--kubernetes", "-n", "serving", "-l", selector, "--kubeconfig",
                            str(cluster.kubeconfig(tmp_path / "kubeconfig")))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and expected in result.stderr, result.stderr


@pytest.mark.parametrize("args, expected", [
    (["--kubernetes", "-n", "serving"], "--kubernetes needs -l SELECTOR"),
    (["--kubernetes", "-l", "app=x", "--kubeconfig", "/nonexistent/kubeconfig"], "no usable Kubernetes configuration"),
    (["--kubernetes", "-l", "app=x", "some.json"], "either report files or --kubernetes"),
    (["--kubernetes", "-l", "app=x", "--save", "/dev/null/reports"], "/dev/null/reports/pod.json"),  # before any pod
])
def test_bad_kubernetes_usage_is_one_line_and_exit_2(args, expected):
    result = run_doctor("fleet", *args)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1 and expected in result.stderr, result.stderr


# ------------------------------------------------------------------ the in-cluster example


def documents() -> dict[str, dict]:
    return {doc["kind"]: doc for doc in yaml.safe_load_all(FLEET_EXAMPLE.read_text())}


def test_the_fleet_job_and_its_rbac_validate_against_the_kubernetes_schemas():
    docs = documents()
    assert list(docs) == ["ServiceAccount", "Role", "RoleBinding", "Job"]
    for doc in docs.values():
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    broken = documents()["Job"]
    broken["spec"]["template"]["spec"]["serviceAccountNam"] = broken["spec"]["template"]["spec"].pop("serviceAccountName")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSION, strict=True)


def test_the_role_grants_what_the_collection_does_to_the_job_s_account():
    docs = documents()
    granted = {(resource, verb) for rule in docs["Role"]["rules"] for resource in rule["resources"] for verb in rule["verbs"]}
    assert {("pods", "list"), ("pods", "get"), ("pods/exec", "create"), ("pods/exec", "get")} <= granted
    assert not any(verb in ("delete", "update", "patch", "*") for _, verb in granted)
    binding, account = docs["RoleBinding"], docs["ServiceAccount"]["metadata"]["name"]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": docs["Role"]["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account}]
    assert docs["Job"]["spec"]["template"]["spec"]["serviceAccountName"] == account


def test_the_job_s_command_runs_against_the_example_deployment_s_pods(tmp_path, reports):
    (container,) = documents()["Job"]["spec"]["template"]["spec"]["containers"]
    command = [word.replace("$(POD_NAMESPACE)", "serving") for word in container["command"]]
    assert command[:3] == ["paddle-doctor", "fleet", "--kubernetes"]
    deployment = next(doc for doc in yaml.safe_load_all(DEPLOYMENT.read_text()) if doc["kind"] == "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert command[command.index("-l") + 1] == ",".join(f"{key}={value}" for key, value in labels.items())
    (service,) = deployment["spec"]["template"]["spec"]["containers"]
    in_pod = shlex.split(command[command.index("--command") + 1])
    config = {item["name"]: item["value"] for item in service["env"]}["SERVICE_CONFIG"]
    assert in_pod[:2] == ["paddle-doctor", "--json"] and in_pod[in_pod.index("--config") + 1] == config
    with FakeCluster(fleet_pods(reports, labels)[:3]) as cluster:
        result = run_doctor(*command[1:], "--kubeconfig", str(cluster.kubeconfig(tmp_path / "kubeconfig")))
    assert result.returncode == 1 and "| 2 | ocr-c (on pool-b-1) | 1 |" in result.stdout, result.stdout + result.stderr
    assert {tuple(exec_command) for _, _, exec_command in cluster.execs} == {tuple(in_pod)}


# ------------------------------------------------------------------ deadlines, stop signals, what pods print


POD_TIMEOUT_S = 3.0


def test_an_api_server_that_never_answers_is_one_line_within_the_pod_timeout(tmp_path):
    with SilentServer() as server:
        began = time.monotonic()
        result = run_doctor("fleet", "--kubernetes", "-n", "serving", "-l", "app=ocr", "--kubeconfig",
                            str(server.kubeconfig(tmp_path / "kubeconfig")), "--pod-timeout", f"{POD_TIMEOUT_S:g}")
        took = time.monotonic() - began
        accepted = server.accepted
    assert result.returncode == 2 and took < 1.5 * POD_TIMEOUT_S, (result.returncode, took, result.stderr)
    assert result.stderr == (f"paddle-doctor: error: the Kubernetes API at {server.url} did not answer the pod listing "
                             f"within {POD_TIMEOUT_S:g} s (--pod-timeout); expected a reachable API server\n")
    assert accepted == 1  # tried once: the client's retries are off


def test_given_up_on_the_listing_the_process_still_exits_2(tmp_path):
    """The listing's thread, left waiting, would abort the interpreter's shutdown when its own
    timeout wakes it (exit 134): a new interpreter, exactly as a user runs it, exits 2."""
    with SilentServer() as server:
        result = run_doctor_process("fleet", "--kubernetes", "-l", "app=ocr", "--kubeconfig",
                                    str(server.kubeconfig(tmp_path / "kubeconfig")), "--pod-timeout", f"{POD_TIMEOUT_S:g}")
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stderr.endswith(f"did not answer the pod listing within {POD_TIMEOUT_S:g} s (--pod-timeout); "
                                  "expected a reachable API server\n") and len(result.stderr.splitlines()) == 1, result.stderr


def test_an_api_server_that_refuses_the_connection_is_not_said_to_be_slow(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as closed:  # a port nothing listens on, once closed
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    result = run_doctor("fleet", "--kubernetes", "-l", "app=ocr", "--kubeconfig", str(kubeconfig(tmp_path / "kubeconfig", url)),
                        "--pod-timeout", "60")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"paddle-doctor: error: cannot reach the Kubernetes API at {url}: NewConnectionError: ")
    assert "Connection refused" in result.stderr


def test_a_pod_that_never_answers_is_a_timeout_within_the_pod_timeout(tmp_path):
    with FakeCluster([FakePod("ocr-slow", hang=True)]) as cluster:
        began = time.monotonic()
        result = run_doctor("fleet", "--kubernetes", "-n", "serving", "-l", "app=ocr", "--json", "--kubeconfig",
                            str(cluster.kubeconfig(tmp_path / "kubeconfig")), "--pod-timeout", f"{POD_TIMEOUT_S:g}")
        took = time.monotonic() - began
    (unreached,) = json.loads(result.stdout)["unreached"]
    assert result.returncode == 1 and unreached["reason"] == "timeout" and took < 1.5 * POD_TIMEOUT_S, (took, result.stderr)
    assert unreached["detail"] == f"no report within {POD_TIMEOUT_S:g} s"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_signal_during_the_listing_ends_the_fleet_at_once_with_a_true_line(tmp_path, stop):
    with (SilentServer() as server,
          RunningDoctor("fleet", "--kubernetes", "-n", "serving", "-l", "app=ocr", "--pod-timeout", "60",
                        "--kubeconfig", str(server.kubeconfig(tmp_path / "kubeconfig"))) as doctor):
        assert server.connected.wait(60), doctor.stderr_lines  # the doctor waits for the listing
        code, took, left = doctor.stop(stop)
    assert code == 2 and took < 5, (code, took, doctor.stderr_lines)
    assert doctor.stderr_lines == [(f"paddle-doctor: stopped by {stop.name} while listing the pods, before anything was "
                                   "printed (exit 2); every child process was ended")]
    assert doctor.stdout == "" and not left


@pytest.mark.parametrize("output", ["json", "text"])
def test_a_stop_signal_during_an_exec_wait_reports_the_pods_diagnosed_before_it(tmp_path, reports, output):
    pods = [FakePod("ocr-a", reports["alike"]), FakePod("ocr-slow", hang=True, node="pool-b-1")]
    with (FakeCluster(pods) as cluster,
          RunningDoctor("fleet", "--kubernetes", "-n", "serving", "-l", "app=ocr", "--pod-timeout", "60",
                        "--parallel", "1", "--format", output,
                        "--kubeconfig", str(cluster.kubeconfig(tmp_path / "kubeconfig")), env={"COLUMNS": "300"}) as doctor):
        assert cluster.hanging.wait(60), doctor.stderr_lines  # ocr-a is diagnosed; the doctor waits for ocr-slow
        code, took, left = doctor.stop(signal.SIGTERM)
    assert code == 2 and took < 5, (code, took, doctor.stderr_lines)
    assert doctor.stderr_lines == [("paddle-doctor: stopped by SIGTERM while exec'ing the doctor in the pods: what is "
                                   "printed is what finished before it (listing the pods); exit 2; every child process was ended")]
    stopped = "not diagnosed: the fleet was stopped by SIGTERM"
    if output == "json":
        report = json.loads(doctor.stdout)
        jsonschema.validate(report, FLEET_SCHEMA)
        assert [group["pods"] for group in report["groups"]] == [["ocr-a"]] and report["exit_code"] == 2
        assert report["unreached"] == [{"pod": "ocr-slow", "node": "pool-b-1", "reason": "stopped", "detail": stopped}]
    else:
        text = " ".join(doctor.stdout.split())
        assert "ocr-a" in text and stopped in text and "1 not diagnosed (exit 2)" in text, doctor.stdout
    assert not left


PASSWORD, JWT = "hunter2-Sup3rSecret", ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
                                        "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")


@pytest.mark.parametrize("output", ["json", "text", "markdown", "html"])
def test_what_a_failing_pod_prints_is_redacted_in_every_format(tmp_path, output):
    stderr = (f"paddle-doctor: error: cannot reach postgres://ocr:{PASSWORD}@db:5432/ocr; password={PASSWORD}; "
              f"Authorization: Bearer {JWT}\n")
    with FakeCluster([FakePod("ocr-broken", exit_code=2, stderr=stderr)]) as cluster:
        result = run_doctor("fleet", "--kubernetes", "-n", "serving", "-l", "app=ocr", "--format", output,
                            "--kubeconfig", str(cluster.kubeconfig(tmp_path / "kubeconfig")), env={"COLUMNS": "400"})
    assert result.returncode == 1, result.stderr
    for secret in (PASSWORD, JWT, *JWT.split(".")):
        assert secret not in result.stdout, output
    text = html.unescape(" ".join(result.stdout.split()))
    if output == "markdown":  # what a reader sees: CommonMark's backslash escapes removed
        text = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)
    assert ("exited 2: paddle-doctor: error: cannot reach postgres://<redacted>@db:5432/ocr; password=<redacted>; "
            "Authorization: Bearer <redacted>") in text, result.stdout


@pytest.mark.parametrize("content, expected", [
    ("apiVersion: v1\nclusters: [\n  - name: x\n", "not valid YAML at line"),
    ("- a\n- b\n", "not a kubeconfig (the YAML is a list, not a mapping)"),
    ("clusters: 3\n", "clusters is not a list of named entries"),
    (("clusters:\n- name: a\n  cluster: 5\ncontexts:\n- name: c\n  context: {cluster: a, user: u}\ncurrent-context: c\n"
     "users:\n- name: u\n  user: 7\n"), "not a usable kubeconfig (TypeError: "),
])
def test_a_malformed_kubeconfig_is_one_line_naming_it(tmp_path, content, expected):
    path = tmp_path / "kubeconfig"
    path.write_text(content)
    result = run_doctor("fleet", "--kubernetes", "-l", "app=ocr", "--kubeconfig", str(path))
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith(f"paddle-doctor: error: {path}: ") and expected in result.stderr, result.stderr
    assert "expected a kubeconfig: YAML with clusters, users and contexts" in result.stderr
