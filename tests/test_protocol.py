"""The predictor worker's protocol: every request and reply survives its JSON line unchanged, a
line of anything else is refused by name, and the doctor's modules the worker runs import nothing
but the standard library (a worker runs in the service's interpreter, where the doctor is not
installed). The worker itself, with Paddle, is tested in tests/test_verify.py and tests/test_load.py."""

import subprocess
import sys

import pytest
from paddle_doctor.base.vocabulary import Layout, Precision
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.verify import protocol
from paddle_doctor.verify.protocol import (
    Crash,
    Create,
    Created,
    Drift,
    DriftOf,
    Drop,
    Exit,
    Failed,
    Feeds,
    FeedShapes,
    FeedSpec,
    Hello,
    Load,
    Loaded,
    LoadWindow,
    Memory,
    Model,
    ProtocolError,
    Rejection,
    Rss,
    Run,
    ServeLayout,
    Shapes,
    read_hello,
    read_reply,
    read_request,
    reply_line,
    request_line,
)
from paddle_doctor.verify.session import worker_program

CONFIG = PredictorConfig(threads=3, onednn=True, precision=Precision.BF16, delete_passes=("fc_fuse_pass",),
                         optim_cache_dir="/tmp/o'dd dir", save_optim_model=True)
REQUESTS = [
    Model("m/inference.json", "m/inference.pdiparams", "m"),
    Model("legacy/__model__", None, "legacy"),
    Feeds([{"ids": FeedSpec("int64", [1, 128], 0, 18000), "words": FeedSpec("int64", [16, 1], lod=[[0, 8, 16]])},
           {"ids": FeedSpec("int64", [2, 128], 0, 18000), "words": FeedSpec("int64", [16, 1], lod=[[0, 8, 16]])}],
          npz=["a.npz", "b.npz"], seed=7),
    Load("arm", CONFIG),
    Create(CONFIG.config_calls()),
    Run("arm", 12, 3),
    DriftOf("a", "b"),
    Shapes("arm", [{"x": [1, 8]}, {"x": [2, 8]}], high=5),
    Drop("arm"),
    ServeLayout("0", Layout.POOL, 2, CONFIG, 3),
    LoadWindow("0", 12.5, 0.3, 3),
    Rss(),
    Crash("SIGSEGV"),
    Exit(),
]


def test_every_command_has_one_request_type():
    assert sorted(protocol.REQUESTS) == sorted({type(request).command for request in REQUESTS})


@pytest.mark.parametrize("request_", REQUESTS, ids=lambda r: type(r).__name__)
def test_a_request_is_the_same_after_its_line(request_):
    line = request_line(request_)
    assert line.endswith("\n") and line.count("\n") == 1
    assert read_request(line) == request_


def test_the_configuration_arrives_as_the_configuration_with_its_calls():
    arrived = read_request(request_line(Load("arm", CONFIG)))
    assert isinstance(arrived, Load) and isinstance(arrived.config, PredictorConfig)
    assert arrived.config.precision is Precision.BF16 and arrived.config.delete_passes == ("fc_fuse_pass",)
    assert arrived.config.config_calls() == CONFIG.config_calls()


@pytest.mark.parametrize("request_, reply", [
    (Load("arm", CONFIG), Loaded(120.5, 9.25)),
    (Create([]), Created(41.0, ["fc_fuse_pass"], [Rejection("Attr(axis)", "matmul", "fc_fuse_pass")])),
    (Feeds([{"x": FeedSpec("float32", [1, 3])}]), FeedShapes([{"x": [1, 3]}])),
    (DriftOf("a", "b"), Drift(0.5, 0.99, None)),
    (Rss(), Memory(300.5)),
])
def test_a_reply_is_read_as_the_type_its_request_answers_with(request_, reply):
    assert read_reply(request_, reply_line(reply).encode()) == reply


def test_a_failure_and_a_greeting_are_read_as_such():
    assert read_reply(Run("arm", 1), b'{"ok": false, "error": "RuntimeError: no"}') == Failed("RuntimeError: no")
    assert read_hello(b'{"ready": true, "paddle": "3.3.1"}') == Hello("3.3.1")


@pytest.mark.parametrize("line, said", [
    ("Paddle says hello\n", "not a JSON request"),
    ("[1, 2]\n", "not a JSON object"),
    ('{"cmd": "format_disk"}\n', "unknown command"),
    ('{"arm": "x"}\n', "unknown command"),
])
def test_a_line_that_is_no_request_is_refused_by_name(line, said):
    with pytest.raises(ProtocolError, match=said):
        read_request(line)


def test_the_worker_runs_the_protocol_without_site_packages(tmp_path):
    """The worker's program, with a stand-in worker that answers one request, in an interpreter
    without site-packages (-S) or the environment (-I): only the standard library is there."""
    echo = tmp_path / "echo_child.py"
    echo.write_text("import sys\n"
                    "from .protocol import Load, Loaded, read_request, reply_line\n"
                    "request = read_request(sys.stdin.readline())\n"
                    "assert isinstance(request, Load)\n"
                    "sys.stdout.write(reply_line(Loaded(float(request.config.threads), len(request.config.config_calls()))))\n")
    done = subprocess.run([sys.executable, "-S", "-I", "-c", worker_program(echo)], input=request_line(Load("arm", CONFIG)),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert read_reply(Load("arm", CONFIG), done.stdout.encode()) == Loaded(3.0, len(CONFIG.config_calls()))
