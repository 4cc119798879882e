"""Reports collected from the pods of a label selector, through the official ``kubernetes`` client
(``pip install 'paddle-doctor[k8s]'``): pods listed through the API, the doctor exec'd in each
running pod (the API server's exec websocket, as ``kubectl exec``), at most ``parallel`` at a time.
Every call has one deadline, ``timeout_s`` (--pod-timeout), and is tried once: the listing and each
pod's exec, connecting included; the client's own retries (urllib3's, 3 by default) are off. A pod
that is not running, has no doctor, may not be exec'd (RBAC), times out or does not print a report
is listed as such, never guessed at; what it printed on stderr is redacted before it is shown.

The waits are the main thread's, so a stop signal (``children``) ends them at once: during the
listing nothing is reported; while pods are exec'd, the pods diagnosed so far are, and the others
are listed as stopped.
"""

from __future__ import annotations

import json
import os
import queue
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..base import children
from ..base.inputs import DOCUMENT_BYTES, SYSTEM_BYTES, YAML_BYTES, Refused, parse_json, read_bytes, read_text, size_words
from ..base.redact import redact_text
from ..base.timebox import run_within
from ..render.output import write_text_atomically
from .reports import FleetError, PodReport, Unreachable, Unreached, pod_report

RBAC_HINT = "the Role in examples/kubernetes/fleet.yaml grants it"
SERVICE_ACCOUNT_NAMESPACE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
HANDSHAKE_STATUS = re.compile(r"Handshake status (\d{3})")
NOT_FOUND = ("executable file not found", "no such file or directory")
ERROR_CHANNEL = 3
SHELL_NOT_FOUND = (126, 127)


@dataclass
class PodCollection:
    """Which pods, what to run in them, how many at a time, and how to reach the cluster."""

    namespace: str | None
    selector: str
    container: str | None
    command: list[str]
    parallel: int
    timeout_s: float
    kubeconfig: str | None = None
    context: str | None = None
    save_dir: str | None = None


CLOSE_WAIT_S = 2.0


def collect_pods(collection: PodCollection) -> tuple[list[PodReport], list[Unreached]]:
    try:
        from kubernetes import client
        from kubernetes.client.rest import ApiException
    except ImportError:
        raise FleetError("--kubernetes needs the kubernetes client; expected it installed: pip install 'paddle-doctor[k8s]'") from None
    configuration, context_namespace = _configuration(collection)
    configuration.retries = False  # tried once, within its deadline: a retry would multiply --pod-timeout
    namespace = collection.namespace or context_namespace or "default"
    with children.phase(LISTING):
        core = client.CoreV1Api(client.ApiClient(configuration))  # seconds of the client loading its classes: not the API's
        listed = run_within(lambda: core.list_namespaced_pod(
            namespace, label_selector=collection.selector, _request_timeout=collection.timeout_s).items,
            collection.timeout_s, "kubernetes-list")
    if not listed.finished or _timed_out(listed.error):
        raise FleetError(f"the Kubernetes API at {configuration.host} did not answer the pod listing within "
                         f"{collection.timeout_s:g} s (--pod-timeout); expected a reachable API server")
    if isinstance(listed.error, ApiException):
        exc = listed.error
        hint = f"; expected get/list on pods ({RBAC_HINT})" if exc.status == 403 else ""
        raise FleetError(f"cannot list pods in namespace {namespace!r}: {exc.status} {exc.reason}{hint}")
    if isinstance(listed.error, Exception):  # urllib3 and socket errors: the API server cannot be reached
        error = listed.error
        raise FleetError(f"cannot reach the Kubernetes API at {configuration.host}: {type(error).__name__}: {_one_line(str(error))}")
    pods = listed.returned()
    if not pods:
        raise FleetError(f"no pods match -l {collection.selector!r} in namespace {namespace!r}; expected the service's pods")
    with children.phase(DIAGNOSING):
        outcomes = _diagnose_all(configuration, namespace, pods, collection)
    return ([o for o in outcomes if isinstance(o, PodReport)], [o for o in outcomes if isinstance(o, Unreached)])


LISTING, DIAGNOSING = "listing the pods", "exec'ing the doctor in the pods"


def _timed_out(error: BaseException | None) -> bool:
    """Whether the client gave up waiting (urllib3 raises its own timeout errors; a refused connection,
    NewConnectionError, is one of them only by inheritance)."""
    from urllib3.exceptions import NewConnectionError
    from urllib3.exceptions import TimeoutError as Urllib3Timeout

    error = getattr(error, "reason", None) or error  # MaxRetryError wraps what happened
    return isinstance(error, (TimeoutError, Urllib3Timeout)) and not isinstance(error, NewConnectionError)


def _diagnose_all(configuration, namespace: str, pods: list, collection: PodCollection) -> list[PodReport | Unreached]:
    """Every pod, ``parallel`` at a time in daemon threads; the main thread only waits, so a stop signal
    reaches it there. Stopped, the pods diagnosed so far are kept and the others listed as stopped."""
    waiting: queue.SimpleQueue = queue.SimpleQueue()
    for pod in pods:
        waiting.put(pod)
    done: queue.SimpleQueue = queue.SimpleQueue()

    def diagnose_some() -> None:
        while True:
            try:
                pod = waiting.get_nowait()
            except queue.Empty:
                return
            outcome: PodReport | Unreached | BaseException
            try:
                outcome = _diagnose(configuration, namespace, pod, collection)
            except BaseException as exc:  # raised in the main thread: a --save that cannot be written, say
                outcome = exc
            done.put((pod.metadata.name, outcome))

    for index in range(min(collection.parallel, len(pods))):
        threading.Thread(target=diagnose_some, name=f"kubernetes-exec-{index}", daemon=True).start()
    outcomes: dict[str, PodReport | Unreached] = {}
    try:
        while len(outcomes) < len(pods):
            name, outcome = done.get()
            if isinstance(outcome, BaseException):
                raise outcome
            outcomes[name] = outcome
    except children.Interrupted as stop:
        while not done.empty():  # diagnosed, not yet taken
            name, outcome = done.get_nowait()
            if not isinstance(outcome, BaseException):
                outcomes[name] = outcome
        for pod in pods:
            if pod.metadata.name not in outcomes:
                outcomes[pod.metadata.name] = Unreached(pod.metadata.name, pod.spec.node_name, Unreachable.STOPPED,
                                                        f"not diagnosed: the fleet was stopped by {stop.signal_name}")
    return [outcomes[pod.metadata.name] for pod in pods]


def _configuration(collection: PodCollection):
    """The client's configuration, and the namespace it names (the kubeconfig context's, or the
    service account's in a pod), if any."""
    from kubernetes import client, config

    configuration = client.Configuration()
    in_cluster = collection.kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST")
    path = None if in_cluster else _kubeconfig_path(collection.kubeconfig)
    if path is not None and os.path.exists(path):
        _check_kubeconfig(path)
    try:
        if in_cluster:
            config.load_incluster_config(client_configuration=configuration)
            try:
                namespace = read_text(SERVICE_ACCOUNT_NAMESPACE, SYSTEM_BYTES).strip() or None
            except (OSError, UnicodeDecodeError):
                namespace = None
        else:
            config.load_kube_config(config_file=collection.kubeconfig, context=collection.context,
                                    client_configuration=configuration)
            contexts, active = config.list_kube_config_contexts(config_file=collection.kubeconfig)
            chosen = next((c for c in contexts if c["name"] == collection.context), active) if collection.context else active
            namespace = ((chosen or {}).get("context") or {}).get("namespace")
    except (config.ConfigException, OSError) as exc:
        raise FleetError(f"no usable Kubernetes configuration ({_one_line(str(exc))}); expected --kubeconfig FILE, $KUBECONFIG, "
                         "~/.kube/config, or a pod's service account") from None
    except (TypeError, AttributeError, KeyError, ValueError) as exc:  # YAML of another shape: the client trips over it
        raise FleetError(f"{path}: not a usable kubeconfig ({type(exc).__name__}: {_one_line(str(exc))}); {KUBECONFIG_EXPECTED}") from None
    return configuration, namespace


KUBECONFIG_EXPECTED = "expected a kubeconfig: YAML with clusters, users and contexts (as `kubectl config view --raw` prints)"
KUBECONFIG_LISTS = ("clusters", "users", "contexts")


def _kubeconfig_path(kubeconfig: str | None) -> str | None:
    """The one kubeconfig file the client will read, or None when $KUBECONFIG names several."""
    if kubeconfig is not None:
        return kubeconfig
    named = os.environ.get("KUBECONFIG")
    if named:
        return None if os.pathsep in named else named
    return os.path.expanduser("~/.kube/config")


def _check_kubeconfig(path: str) -> None:
    """A kubeconfig that is not YAML, or not a mapping of the lists the client reads, is one line naming it."""
    from ..base.serde import load_yaml_file

    try:  # the client would wait on a FIFO, or read /dev/zero without end
        read_bytes(path, YAML_BYTES)
    except Refused as exc:
        raise FleetError(f"{path}: the kubeconfig file {exc}; expected --kubeconfig FILE") from None
    document = load_yaml_file(path, FleetError, "kubeconfig", KUBECONFIG_EXPECTED)
    if not isinstance(document, dict):
        raise FleetError(f"{path}: not a kubeconfig (the YAML is a {type(document).__name__}, not a mapping); {KUBECONFIG_EXPECTED}")
    for key in KUBECONFIG_LISTS:
        entries = document.get(key)
        if entries is not None and not (isinstance(entries, list) and all(isinstance(e, dict) for e in entries)):
            raise FleetError(f"{path}: {key} is not a list of named entries; {KUBECONFIG_EXPECTED}")


def _diagnose(configuration, namespace: str, pod, collection: PodCollection) -> PodReport | Unreached:
    name, node = pod.metadata.name, pod.spec.node_name
    if pod.status.phase != "Running":
        return Unreached(name, node, Unreachable.NOT_RUNNING, f"phase {pod.status.phase}")
    container = collection.container or pod.spec.containers[0].name
    deadline = time.monotonic() + collection.timeout_s
    # the exec's websocket connects without a timeout of its own: the deadline bounds it from here
    bounded = run_within(lambda: _exec(configuration, namespace, name, container, collection, deadline),
                         collection.timeout_s + CLOSE_WAIT_S, f"kubernetes-exec-{name}")
    if not bounded.finished or isinstance(bounded.error, TimeoutError):
        return Unreached(name, node, Unreachable.TIMEOUT, f"no report within {collection.timeout_s:g} s")
    if isinstance(bounded.error, Exception):  # the client raises ApiException, websocket and socket errors alike
        return _exec_failure(name, node, bounded.error)
    stdout, stderr, status = bounded.returned()
    return _outcome(name, node, namespace, stdout, stderr, status, collection)


def _exec(configuration, namespace: str, name: str, container: str, collection: PodCollection,
          deadline: float) -> tuple[str, str, dict[str, Any]]:
    """stdout, stderr and the exec's status object; TimeoutError when the command outlives the deadline."""
    from kubernetes import client
    from kubernetes.stream import stream

    # stream() swaps its ApiClient's transport while it runs: one client per pod, never shared by threads
    core = client.CoreV1Api(client.ApiClient(configuration))
    session = stream(core.connect_get_namespaced_pod_exec, name, namespace, command=collection.command,
                     container=container, stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False)
    try:
        left = deadline - time.monotonic()
        if left > 0:
            session.run_forever(timeout=left)
        if session.is_open():
            raise TimeoutError
        status = session.read_channel(ERROR_CHANNEL)
        return session.read_stdout(), session.read_stderr(), json.loads(status) if status else {}
    finally:
        # wait (briefly) for the server to let go of the exec: a slot is freed only once its exec is closed,
        # so no more than --parallel execs are ever open on the API server
        session.close(timeout=CLOSE_WAIT_S)


def _exec_failure(name: str, node: str | None, exc: Exception) -> Unreached:
    reason = str(getattr(exc, "reason", None) or exc)
    match = HANDSHAKE_STATUS.search(reason)
    code = int(match.group(1)) if match else getattr(exc, "status", None)
    if code == 403:
        return Unreached(name, node, Unreachable.FORBIDDEN, f"exec forbidden (403): expected create on pods/exec; {RBAC_HINT}")
    return Unreached(name, node, Unreachable.FAILED, f"exec failed: {_one_line(reason.split(' -+-+- ')[0])}")


def _outcome(name: str, node: str | None, namespace: str, stdout: str, stderr: str, status: dict[str, Any],
             collection: PodCollection) -> PodReport | Unreached:
    exit_code, message = exit_status(status)
    if exit_code is None:
        kind = Unreachable.NO_DOCTOR if any(text in message for text in NOT_FOUND) else Unreachable.FAILED
        return Unreached(name, node, kind, _one_line(message))
    if exit_code in SHELL_NOT_FOUND:
        return Unreached(name, node, Unreachable.NO_DOCTOR, f"exit {exit_code}: {_last_line(stderr)}")
    if exit_code not in (0, 1):
        return Unreached(name, node, Unreachable.FAILED, f"{collection.command[0]} exited {exit_code}: {_last_line(stderr)}")
    try:
        if len(stdout) > DOCUMENT_BYTES:
            raise Refused(f"{namespace}/{name}", f"printed more than {size_words(DOCUMENT_BYTES)}, the most the doctor reads of a report")
        report = pod_report(parse_json(stdout, f"{namespace}/{name}"), name, f"{namespace}/{name}", node)
    except (ValueError, Refused) as exc:  # not JSON, nested too deeply, too large, or FleetError: not a report
        return Unreached(name, node, Unreachable.FAILED, f"did not print a --json report ({_one_line(str(exc).splitlines()[0])})")
    if collection.save_dir:
        write_text_atomically(Path(collection.save_dir) / f"{name}.json", stdout, FleetError, "report")
    return report


def exit_status(status: dict[str, Any]) -> tuple[int | None, str]:
    """(exit code, '') from the exec's status object, or (None, why the command did not run)."""
    if status.get("status") == "Success":
        return 0, ""
    causes = (status.get("details") or {}).get("causes") or []
    if status.get("reason") == "NonZeroExitCode":
        codes = [cause.get("message") for cause in causes if cause.get("reason") == "ExitCode"]
        if codes and str(codes[0]).isdigit():
            return int(codes[0]), ""
    return None, status.get("message") or "the exec ended without an exit status"


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return _one_line(lines[-1]) if lines else "no output on stderr"


DETAIL_MAX = 400  # characters of what a pod or the API printed, in one detail


def _one_line(text: str) -> str:
    """Text from a pod or the API server, as the fleet report may show it: secrets redacted, one line, bounded."""
    line = " ".join(redact_text(text).split())
    return line if len(line) <= DETAIL_MAX else line[:DETAIL_MAX - 3] + "..."
