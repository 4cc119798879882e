"""A stand-in for the Kubernetes API server on 127.0.0.1, speaking the real wire protocol: pod lists
as JSON over HTTP, exec as the API server's websocket (channel-prefixed frames: 1 stdout, 2 stderr,
3 the exec's status object). The official client talks to it unchanged, through a kubeconfig."""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import yaml

WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TOKEN = "fleet-test-token"
NOT_FOUND = ('OCI runtime exec failed: exec failed: unable to start container process: exec: "paddle-doctor": '
             "executable file not found in $PATH: unknown")


@dataclass
class FakePod:
    """A pod and what exec'ing in it does: print ``stdout`` and exit ``exit_code``, or one of
    ``forbidden`` (RBAC refuses the exec), ``missing`` (no such executable), ``hang`` (never answers)."""

    name: str
    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
    node: str = "node-1"
    phase: str = "Running"
    labels: dict[str, str] = field(default_factory=lambda: {"app": "ocr"})
    forbidden: bool = False
    missing: bool = False
    hang: bool = False


def frame(payload: bytes, opcode: int = 0x2) -> bytes:
    """One unmasked server frame."""
    size = len(payload)
    if size < 126:
        head = bytes([0x80 | opcode, size])
    elif size < 1 << 16:
        head = bytes([0x80 | opcode, 126]) + size.to_bytes(2, "big")
    else:
        head = bytes([0x80 | opcode, 127]) + size.to_bytes(8, "big")
    return head + payload


def exec_status(pod: FakePod) -> dict:
    if pod.missing:
        return {"metadata": {}, "status": "Failure", "message": NOT_FOUND, "reason": "InternalError",
                "details": {"causes": [{"message": NOT_FOUND}]}, "code": 500}
    if pod.exit_code == 0:
        return {"metadata": {}, "status": "Success"}
    return {"metadata": {}, "status": "Failure", "message": f"command terminated with non-zero exit code: {pod.exit_code}",
            "reason": "NonZeroExitCode", "details": {"causes": [{"reason": "ExitCode", "message": str(pod.exit_code)}]}}


def kubeconfig(path: Path, url: str, namespace: str | None = None) -> Path:
    """A kubeconfig for the API server at ``url``; its context names ``namespace`` when given."""
    context = {"cluster": "fake", "user": "fake", **({"namespace": namespace} if namespace else {})}
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": url}}],
        "users": [{"name": "fake", "user": {"token": TOKEN}}],
        "contexts": [{"name": "fake", "context": context}],
    }))
    return path


class SilentServer:
    """An API server on 127.0.0.1 that accepts every connection and never answers (a wedged API
    server, a black-holing proxy). ``connected`` is set at the first connection, ``accepted`` counts
    them. It closes itself after ``lifetime_s``, or when the ``with`` block ends."""

    def __init__(self, lifetime_s: float = 120.0):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.connected, self.closing = threading.Event(), threading.Event()
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, args=(lifetime_s,), daemon=True)

    def _serve(self, lifetime_s: float) -> None:
        ends = time.monotonic() + lifetime_s
        while not self.closing.is_set() and time.monotonic() < ends:
            try:
                connection, _ = self.socket.accept()
            except TimeoutError:
                continue
            self.connections.append(connection)
            self.connected.set()
        for connection in self.connections:
            connection.close()
        self.socket.close()

    @property
    def accepted(self) -> int:
        return len(self.connections)

    def kubeconfig(self, path: Path) -> Path:
        return kubeconfig(path, self.url)

    def __enter__(self) -> SilentServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closing.set()
        self.thread.join(5)


class FakeCluster:
    """Serves ``pods`` in namespace ``namespace``; ``execs`` records (pod, container, command) of every exec,
    ``most_running`` the most execs open at one time; ``hanging`` is set once an exec that never answers has begun."""

    def __init__(self, pods: list[FakePod], namespace: str = "serving", list_forbidden: bool = False):
        self.pods, self.namespace, self.list_forbidden = pods, namespace, list_forbidden
        self.execs: list[tuple[str, str, list[str]]] = []
        self.running = self.most_running = 0
        self.hanging = threading.Event()
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeCluster:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def kubeconfig(self, path: Path, namespace: str | None = None) -> Path:
        return kubeconfig(path, self.url, namespace)

    def pod_object(self, pod: FakePod) -> dict:
        return {"metadata": {"name": pod.name, "namespace": self.namespace, "labels": pod.labels},
                "spec": {"nodeName": pod.node, "containers": [{"name": "service", "image": "paddle-service:latest"}]},
                "status": {"phase": pod.phase}}


def _handler(cluster: FakeCluster):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            url = urlparse(self.path)
            parts = url.path.strip("/").split("/")
            query = parse_qs(url.query)
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                return self.reply(401, {"kind": "Status", "status": "Failure", "reason": "Unauthorized", "code": 401})
            if parts[:3] != ["api", "v1", "namespaces"] or parts[3] != cluster.namespace or parts[4] != "pods":
                return self.reply(404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404})
            if len(parts) == 5:
                return self.list_pods(query.get("labelSelector", [""])[0])
            pod = next((p for p in cluster.pods if p.name == parts[5]), None)
            if pod is None or parts[6:] != ["exec"]:
                return self.reply(404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404})
            self.exec(pod, query)

        def list_pods(self, selector: str) -> None:
            if cluster.list_forbidden:
                return self.reply(403, {"kind": "Status", "status": "Failure", "reason": "Forbidden", "code": 403,
                                        "message": 'pods is forbidden: cannot list resource "pods"'})
            wanted = dict(term.split("=", 1) for term in selector.split(",") if term)
            items = [cluster.pod_object(p) for p in cluster.pods if wanted.items() <= p.labels.items()]
            self.reply(200, {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items})

        def exec(self, pod: FakePod, query: dict[str, list[str]]) -> None:
            cluster.execs.append((pod.name, query["container"][0], query["command"]))
            if pod.forbidden:
                return self.reply(403, {"kind": "Status", "status": "Failure", "reason": "Forbidden", "code": 403,
                                        "message": 'pods "x" is forbidden: cannot create resource "pods/exec"'})
            accept = base64.b64encode(hashlib.sha1((self.headers["Sec-WebSocket-Key"] + WEBSOCKET_GUID).encode()).digest())
            self.send_response(101, "Switching Protocols")
            for name, value in (("Upgrade", "websocket"), ("Connection", "Upgrade"),
                                ("Sec-WebSocket-Accept", accept.decode()), ("Sec-WebSocket-Protocol", "v4.channel.k8s.io")):
                self.send_header(name, value)
            self.end_headers()
            self.close_connection = True
            with cluster.lock:
                cluster.running += 1
                cluster.most_running = max(cluster.most_running, cluster.running)
            try:
                self.answer(pod)
            finally:
                with cluster.lock:
                    cluster.running -= 1

        def answer(self, pod: FakePod) -> None:
            if pod.hang:
                cluster.hanging.set()
                self.connection.settimeout(30)
                try:
                    self.connection.recv(64)  # until the client gives up and closes
                except OSError:
                    pass
                return
            data = pod.stdout.encode()
            frames = [frame(b"\x01" + data[start:start + 16384]) for start in range(0, len(data), 16384)]
            if pod.stderr:
                frames.append(frame(b"\x02" + pod.stderr.encode()))
            frames.append(frame(b"\x03" + json.dumps(exec_status(pod)).encode()))
            frames.append(frame((1000).to_bytes(2, "big"), opcode=0x8))
            self.wfile.write(b"".join(frames))
            self.wfile.flush()
            self.connection.settimeout(5)
            try:
                self.connection.recv(64)  # the client's close frame
            except OSError:
                pass

        def reply(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
