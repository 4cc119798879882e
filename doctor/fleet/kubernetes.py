"""Reports collected from the pods of a label selector, through the official ``kubernetes`` client
(``pip install 'paddle-doctor[k8s]'``): pods listed through the API, the doctor exec'd in each
running pod (the API server's exec websocket, as ``kubectl exec``), at most ``parallel`` at a time
and each within ``timeout_s``. A pod that is not running, has no doctor, may not be exec'd (RBAC),
times out or does not print a report is listed as such, never guessed at.
"""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..inputs import DOCUMENT_BYTES, SYSTEM_BYTES, YAML_BYTES, Refused, parse_json, read_bytes, read_text, size_words
from ..serde import write_text_atomically
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
    namespace = collection.namespace or context_namespace or "default"
    try:
        pods = client.CoreV1Api(client.ApiClient(configuration)).list_namespaced_pod(
            namespace, label_selector=collection.selector, _request_timeout=collection.timeout_s).items
    except ApiException as exc:
        hint = f"; expected get/list on pods ({RBAC_HINT})" if exc.status == 403 else ""
        raise FleetError(f"cannot list pods in namespace {namespace!r}: {exc.status} {exc.reason}{hint}") from None
    except Exception as exc:  # urllib3 and socket errors: the API server cannot be reached
        raise FleetError(f"cannot reach the Kubernetes API at {configuration.host}: {type(exc).__name__}: {exc}") from None
    if not pods:
        raise FleetError(f"no pods match -l {collection.selector!r} in namespace {namespace!r}; expected the service's pods")
    with ThreadPoolExecutor(max_workers=collection.parallel) as pool:
        outcomes = list(pool.map(lambda pod: _diagnose(configuration, namespace, pod, collection), pods))
    return ([o for o in outcomes if isinstance(o, PodReport)], [o for o in outcomes if isinstance(o, Unreached)])


def _configuration(collection: PodCollection):
    """The client's configuration, and the namespace it names (the kubeconfig context's, or the
    service account's in a pod), if any."""
    from kubernetes import client, config

    configuration = client.Configuration()
    try:
        if collection.kubeconfig is None and os.environ.get("KUBERNETES_SERVICE_HOST"):
            config.load_incluster_config(client_configuration=configuration)
            try:
                namespace = read_text(SERVICE_ACCOUNT_NAMESPACE, SYSTEM_BYTES).strip() or None
            except (OSError, UnicodeDecodeError):
                namespace = None
        else:
            if collection.kubeconfig is not None:  # the client would wait on a FIFO, or read /dev/zero without end
                read_bytes(collection.kubeconfig, YAML_BYTES)
            config.load_kube_config(config_file=collection.kubeconfig, context=collection.context,
                                    client_configuration=configuration)
            contexts, active = config.list_kube_config_contexts(config_file=collection.kubeconfig)
            chosen = next((c for c in contexts if c["name"] == collection.context), active) if collection.context else active
            namespace = ((chosen or {}).get("context") or {}).get("namespace")
    except Refused as exc:
        raise FleetError(f"{collection.kubeconfig}: the kubeconfig file {exc}; expected --kubeconfig FILE") from None
    except (config.ConfigException, OSError) as exc:
        raise FleetError(f"no usable Kubernetes configuration ({exc}); expected --kubeconfig FILE, $KUBECONFIG, "
                         "~/.kube/config, or a pod's service account") from None
    return configuration, namespace


def _diagnose(configuration, namespace: str, pod, collection: PodCollection) -> PodReport | Unreached:
    name, node = pod.metadata.name, pod.spec.node_name
    if pod.status.phase != "Running":
        return Unreached(name, node, Unreachable.NOT_RUNNING, f"phase {pod.status.phase}")
    container = collection.container or pod.spec.containers[0].name
    try:
        stdout, stderr, status = _exec(configuration, namespace, name, container, collection)
    except TimeoutError:
        return Unreached(name, node, Unreachable.TIMEOUT, f"no report within {collection.timeout_s:g} s")
    except Exception as exc:  # the client raises ApiException, websocket and socket errors alike
        return _exec_failure(name, node, exc)
    return _outcome(name, node, namespace, stdout, stderr, status, collection)


def _exec(configuration, namespace: str, name: str, container: str, collection: PodCollection) -> tuple[str, str, dict[str, Any]]:
    """stdout, stderr and the exec's status object; TimeoutError when the command outlives the timeout."""
    from kubernetes import client
    from kubernetes.stream import stream

    # stream() swaps its ApiClient's transport while it runs: one client per pod, never shared by threads
    core = client.CoreV1Api(client.ApiClient(configuration))
    session = stream(core.connect_get_namespaced_pod_exec, name, namespace, command=collection.command,
                     container=container, stdin=False, stdout=True, stderr=True, tty=False, _preload_content=False)
    try:
        session.run_forever(timeout=collection.timeout_s)
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
    return Unreached(name, node, Unreachable.FAILED, f"exec failed: {reason.split(' -+-+- ')[0].strip()}")


def _outcome(name: str, node: str | None, namespace: str, stdout: str, stderr: str, status: dict[str, Any],
             collection: PodCollection) -> PodReport | Unreached:
    exit_code, message = exit_status(status)
    if exit_code is None:
        kind = Unreachable.NO_DOCTOR if any(text in message for text in NOT_FOUND) else Unreachable.FAILED
        return Unreached(name, node, kind, message)
    if exit_code in SHELL_NOT_FOUND:
        return Unreached(name, node, Unreachable.NO_DOCTOR, f"exit {exit_code}: {_last_line(stderr)}")
    if exit_code not in (0, 1):
        return Unreached(name, node, Unreachable.FAILED, f"{collection.command[0]} exited {exit_code}: {_last_line(stderr)}")
    try:
        if len(stdout) > DOCUMENT_BYTES:
            raise Refused(f"{namespace}/{name}", f"printed more than {size_words(DOCUMENT_BYTES)}, the most the doctor reads of a report")
        report = pod_report(parse_json(stdout, f"{namespace}/{name}"), name, f"{namespace}/{name}", node)
    except (ValueError, Refused) as exc:  # not JSON, nested too deeply, too large, or FleetError: not a report
        return Unreached(name, node, Unreachable.FAILED, f"did not print a --json report ({str(exc).splitlines()[0]})")
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
    return lines[-1] if lines else "no output on stderr"
