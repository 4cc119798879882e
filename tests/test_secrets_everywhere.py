"""No secret the doctor reads leaves it, in any format: one table of realistic secrets, each placed
in every place the doctor reads text from (the service's source: a Config call's code and an
``os.environ.get`` default; the recorded /proc tree of the service: its environment and command
line; the --config file), and the real CLI run for every output. The words around a secret stay
(the host, the key, the variable), so redaction is told apart from deletion."""

import html
import json
import posixpath
import shutil
import time

import pytest
from conftest import FIXTURES, run_doctor
from paddle_doctor.base.redact import REDACTED, TAIL_MARGIN, redact_text, redacted_tail

R = REDACTED
PID = "4242"
NO_PROBES = ("--no-paddle", "--no-gpu")
WIDE = {"COLUMNS": "2000"}  # the text report unwrapped, so a context is found on one line
JWT_PARTS = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "eyJzdWIiOiJzdmMtb2NyIiwiaWF0IjoxNzE2MjM5MDIyfQ",
             "Qw3rT9yUi0pLk7mNb2vCx5zAs8dFg4hJ6kLq1wE0rTy")
JWT = ".".join(JWT_PARTS)
AWS_KEY_ID, AWS_SECRET = "AKIAZ7XQ4KDRT5JP9WLM", "q8Vx2Lr9/Tb4Nm7Kc1Zw+Hd5Jf3Gs6Yp0Ue8Ri2O"
PRIVATE_KEY_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"

# what the service holds, the parts that must never be printed, and how it is printed
SECRETS = [
    ("postgres", "postgres://svc:pgS3cretPw@db.internal:5432/app", ("pgS3cretPw",), f"postgres://{R}@db.internal:5432/app"),
    ("mysql", "mysql://root:myR00tPw@mysql.internal:3306/shop", ("myR00tPw",), f"mysql://{R}@mysql.internal:3306/shop"),
    ("redis", "redis://default:r3disPw@cache.internal:6379/0", ("r3disPw",), f"redis://{R}@cache.internal:6379/0"),
    ("amqp", "amqp://guest:rabb1tPw@mq.internal:5672/%2f", ("rabb1tPw",), f"amqp://{R}@mq.internal:5672/%2f"),
    ("mongodb+srv", "mongodb+srv://ocr:m0ngoPw@cluster0.ab1cd.mongodb.net/ocr?retryWrites=true", ("m0ngoPw",),
     f"mongodb+srv://{R}@cluster0.ab1cd.mongodb.net/ocr?retryWrites=true"),
    ("https", "https://admin:adm1nPw@models.internal/ocr", ("adm1nPw",), f"https://{R}@models.internal/ocr"),
    ("s3", f"s3://{AWS_KEY_ID}:{AWS_SECRET}@models-bucket/ocr", (AWS_KEY_ID, AWS_SECRET), f"s3://{R}@models-bucket/ocr"),
    ("aws pair", f"{AWS_KEY_ID} {AWS_SECRET}", (AWS_KEY_ID, AWS_SECRET), f"{R} {R}"),
    ("password=", "password=hunter2", ("hunter2",), f"password={R}"),
    ("PASSWORD:", "PASSWORD: correct-horse-battery", ("correct-horse-battery",), f"PASSWORD: {R}"),
    ("bearer", f"Authorization: Bearer {JWT}", JWT_PARTS, f"Authorization: Bearer {R}"),
    ("jwt", JWT, JWT_PARTS, R),
    ("github", "ghp_" + "k3Jd9QxW2mZp7LbV4nHs8TfY1cRa6UeG0oIt", ("k3Jd9QxW2mZp7LbV4nHs8TfY1cRa6UeG0oIt",), R),
    ("gitlab", "glpat-" + "xR4nd0mT0k3nV4lu3zQq", ("xR4nd0mT0k3nV4lu3zQq",), R),
    ("slack", "xoxb-" + "2918475630-5829104736-Hq8Wv3Zt6Yp1Lm4Nk7Rx", ("2918475630-5829104736-Hq8Wv3Zt6Yp1Lm4Nk7Rx",), R),
    ("private key", f"-----BEGIN PRIVATE KEY-----\n{PRIVATE_KEY_BODY}\n-----END PRIVATE KEY-----", (PRIVATE_KEY_BODY,),
     f"-----BEGIN PRIVATE KEY-----{R}-----END PRIVATE KEY-----"),
    ("--api-key", "--api-key=ak-7Hq2Wz9Lp4", ("ak-7Hq2Wz9Lp4",), f"--api-key={R}"),
    ("connection string", "Server=sql.internal;Database=ocr;User Id=sa;Password=Sq1Secret9;",
     ("Sq1Secret9",), f"Server=sql.internal;Database=ocr;User Id=sa;Password={R};"),
]
IDS = [label for label, *_ in SECRETS]
REPORT_FORMATS = ("text", "json", "sarif", "junit", "markdown", "html")
# the formats that print the source line the secret sits in (markdown and html name its file:line only)
SHOWING_THE_LINE = ("text", "json", "sarif", "junit")

SOURCE = """\
import os
from paddle import inference

config = inference.Config("/models/ocr/inference.pdmodel", "/models/ocr/inference.pdiparams")
config.set_cpu_math_library_num_threads(os.cpu_count() if os.environ.get("MODEL_SOURCE", {secret!r}) else 4)
config.set_mkldnn_cache_capacity(os.environ.get("ONEDNN_CACHE", {secret!r}))
"""


def service_tree(tmp_path, secret: str, environ: dict[str, str], argv: list[str], source: str):
    """A copy of the recorded one-service /proc tree with the service's environment, command line and source replaced."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "processes" / "one-service", root, symlinks=True)
    proc = root / "proc" / PID
    (proc / "environ").write_bytes("".join(f"{name}={value}\0" for name, value in environ.items()).encode())
    (proc / "cmdline").write_bytes("".join(f"{argument}\0" for argument in argv).encode())
    (root / "srv" / "app.py").write_text(source)
    return root


def outputs(tmp_path, root, config) -> dict[str, str]:
    """Every output of the doctor on ``root``: the reports, the facts, the baseline, the healthcheck's."""
    common = ("--root", str(root), "--pid", PID, "--config", str(config), *NO_PROBES)
    printed = {}
    for fmt in REPORT_FORMATS:
        result = run_doctor("check", *common, "--format", fmt, env=WIDE)
        assert result.returncode in (0, 1), result.stderr
        printed[fmt] = result.stdout + result.stderr
    facts = run_doctor("facts", *common)
    assert facts.returncode == 0, facts.stderr
    printed["facts"] = facts.stdout + facts.stderr
    baseline = tmp_path / "baseline.json"
    written = run_doctor("baseline", *common, "--out", str(baseline))
    assert written.returncode == 0, written.stderr
    printed["baseline"] = baseline.read_text() + written.stdout + written.stderr
    for shape in (("--json",), ()):
        result = run_doctor("healthcheck", "--baseline", str(baseline), "--config", str(config), *shape)
        assert result.returncode in (0, 1) and result.stdout, result.stderr
        printed["healthcheck" + "".join(shape)] = result.stdout + result.stderr
    return printed


@pytest.mark.parametrize("label, secret, sensitive, shown", SECRETS, ids=IDS)
def test_redact_text_cuts_the_secret_and_keeps_its_context(label, secret, sensitive, shown):
    assert redact_text(secret) == shown


@pytest.mark.parametrize("label, secret, sensitive, shown", SECRETS, ids=IDS)
def test_no_secret_leaves_the_doctor_in_any_output(tmp_path, label, secret, sensitive, shown):
    environ = {"PATH": "/usr/local/bin:/usr/bin", "INFER_THREADS": "4", "MODEL_SOURCE": secret}
    root = service_tree(tmp_path, secret, environ, ["python3", "app.py", "--port", "8080", secret],
                        SOURCE.format(secret=secret))
    config = tmp_path / "service.yaml"
    config.write_text(f"optim_cache_dir: {json.dumps(secret)}\n")
    printed = outputs(tmp_path, root, config)
    for name, output in printed.items():
        for part in sensitive:
            assert part not in output, f"{label}: {part!r} printed in the {name} output"
    line = f"os.environ.get('MODEL_SOURCE', {shown!r})"
    for fmt in SHOWING_THE_LINE:
        assert line in html.unescape(printed[fmt]), f"{label}: the {fmt} report lost the line's context"
    for fmt in ("markdown", "html"):
        assert "PD-SRC-007" in printed[fmt] and "app.py:5" in printed[fmt]
    facts = json.JSONDecoder().raw_decode(printed["facts"])[0]  # stderr follows the JSON
    assert facts["service_process"]["environ"]["MODEL_SOURCE"] == shown
    assert facts["service"]["optim_cache_dir"] == shown
    settings = {setting["name"]: setting for setting in facts["service_source"]["settings"]}
    assert (settings["onednn_cache_capacity"]["env_var"], settings["onednn_cache_capacity"]["env_default"]) == ("ONEDNN_CACHE", shown)
    cache = json.loads(printed["baseline"].split("\npaddle-doctor: ")[0])["cache"]["path"]
    assert cache == posixpath.normpath(posixpath.join("/", shown))  # the folder, relative to the container's /


def test_ordinary_values_are_not_redacted(tmp_path):
    source = """\
import os
from paddle import inference

config = inference.Config("/models/ocr/inference.pdmodel", "/models/ocr/inference.pdiparams")
config.set_cpu_math_library_num_threads(os.cpu_count())
config.set_optim_cache_dir(os.environ.get("CACHE_DIR", "/models/ocr/_opt_cache"))
config.set_mkldnn_cache_capacity(int(os.environ.get("ONEDNN_CACHE", "10")))
"""
    environ = {"PATH": "/opt/conda/envs/serving/bin:/usr/bin", "MODEL_DIR": "/models/ocr/inference.pdmodel",
               "OMP_NUM_THREADS": "4", "CUDA_VISIBLE_DEVICES": "GPU-8f3a1c2e-5b6d-4e7f-9a0b-1c2d3e4f5a6b",
               "SERVICE_URL": "http://ocr:8080/predict", "HOSTNAME": "paddle-serving-7d9f8c6b5-x2kqz"}
    root = service_tree(tmp_path, "", environ, ["python3", "app.py", "--port", "8080", "--workers", "2"], source)
    config = tmp_path / "service.yaml"
    config.write_text("model: /models/ocr/inference\n")
    printed = outputs(tmp_path, root, config)
    for name, output in printed.items():
        assert R not in html.unescape(output), f"{name}: an ordinary value was redacted"
    facts = json.JSONDecoder().raw_decode(printed["facts"])[0]  # stderr follows the JSON
    assert facts["service_process"]["environ"] == environ
    assert facts["service"]["model"] == "/models/ocr/inference"
    codes = {setting["name"]: setting["code"] for setting in facts["service_source"]["settings"]}
    assert codes["threads"] == "config.set_cpu_math_library_num_threads(os.cpu_count())"
    assert codes["optim_cache_dir"] == "config.set_optim_cache_dir(os.environ.get('CACHE_DIR', '/models/ocr/_opt_cache'))"
    assert "os.cpu_count()" in printed["text"] and "/models/ocr/_opt_cache" in printed["text"]


@pytest.mark.parametrize("text", [
    "a://" * 25_000, "a://b:" * 17_000, "-" * 100_000, "eyJa-" * 20_000, "xoxb-" * 20_000, "glpat-" * 17_000,
    "a" * 100_000, "-----BEGIN PRIVATE KEY-----" * 4_000, "password=" * 11_000,
], ids=["schemes", "schemes-with-colons", "dashes", "jwt-starts", "slack-starts", "gitlab-starts", "letters", "key-blocks", "pairs"])
def test_a_hostile_text_is_redacted_in_linear_time(text):
    """100 kB shaped to make a backtracking pattern quadratic (a minute, for "a://" repeated) takes well under a second."""
    started = time.perf_counter()
    redact_text(text)
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("label, secret, sensitive, shown", SECRETS, ids=IDS)
def test_no_secret_a_child_prints_leaves_the_doctor(tmp_path, label, secret, sensitive, shown):
    """The Paddle probe's interpreter fails with the secret in its error output (a service's
    sitecustomize logging its connection): the reason and the error's tail say it redacted."""
    python = tmp_path / "python3"
    python.write_text(f"#!/bin/sh\ncat >&2 <<'END'\nTraceback (most recent call last):\nRuntimeError: cannot reach {secret}\nEND\nexit 3\n")
    python.chmod(0o755)
    common = ("--root", str(FIXTURES / "roots" / "intel-noavx2-v1-quota"), "--python", str(python), "--no-gpu")
    printed = {fmt: run_doctor("check", *common, "--format", fmt, env=WIDE) for fmt in REPORT_FORMATS}
    printed["facts"] = run_doctor("facts", *common)
    for name, result in printed.items():
        assert result.stdout, result.stderr
        for part in sensitive:
            assert part not in result.stdout + result.stderr, f"{label}: {part!r} printed in the {name} output"
    paddle = json.loads(printed["facts"].stdout)["paddle"]
    assert paddle["stderr_tail"].endswith(f"RuntimeError: cannot reach {shown}")
    assert paddle["reason"] == f"importing Paddle failed (exit code 3): RuntimeError: cannot reach {shown}"


@pytest.mark.parametrize("label, secret, sensitive, shown", SECRETS, ids=IDS)
def test_a_recorded_secret_read_back_is_redacted(tmp_path, label, secret, sensitive, shown):
    """Facts and a baseline recorded by an older doctor, or edited by hand, with the secret in them
    unredacted: ``check --facts`` and ``healthcheck --baseline`` print it redacted."""
    environ = {"PATH": "/usr/bin", "INFER_THREADS": "4"}
    source = SOURCE.format(secret="/models/ocr")
    root = service_tree(tmp_path, "", environ, ["python3", "app.py"], source)
    recorded, baseline, config = tmp_path / "facts.json", tmp_path / "baseline.json", tmp_path / "service.yaml"
    config.write_text("optim_cache_dir: /models/ocr/_opt_cache\n")
    common = ("--root", str(root), "--pid", PID, "--config", str(config), *NO_PROBES)
    assert run_doctor("facts", *common, "-o", str(recorded)).returncode == 0
    assert run_doctor("baseline", *common, "--out", str(baseline)).returncode == 0
    facts = json.loads(recorded.read_text())
    facts["service_process"]["environ"].update({"MODEL_SOURCE": secret, "DB_PASS": "hunter2-by-name"})
    for setting in facts["service_source"]["settings"]:
        setting["code"] = f"config.set_optim_cache_dir(os.environ.get('MODEL_SOURCE', {secret!r}))"
    recorded.write_text(json.dumps(facts))
    data = json.loads(baseline.read_text())
    data["cache"]["path"] = secret
    baseline.write_text(json.dumps(data))
    report = run_doctor("check", "--facts", str(recorded), "--format", "json")
    health = run_doctor("healthcheck", "--baseline", str(baseline), "--json")
    for name, result in (("check --facts", report), ("healthcheck", health)):
        assert result.stdout, result.stderr
        for part in (*sensitive, "hunter2-by-name"):
            assert part not in result.stdout + result.stderr, f"{label}: {part!r} printed by {name}"
    service = json.loads(report.stdout)["service"]
    assert service["process"]["environ"].get("MODEL_SOURCE", shown) == shown
    assert f"os.environ.get('MODEL_SOURCE', {shown!r})" in report.stdout
    assert R in health.stdout


def test_the_tail_of_an_error_output_keeps_no_half_of_a_secret():
    """The kept end of a child's stderr begins inside a secret, and the key block after it shrinks to a line when cut."""
    chars = 800
    key_block = f"-----BEGIN PRIVATE KEY-----\n{'A' * (chars + TAIL_MARGIN - 90)}\n-----END PRIVATE KEY-----"
    text = f"connecting with password=Tr0ub4dor-horse-battery-staple\n{key_block}\nRuntimeError: no database"
    assert len(text) > chars + TAIL_MARGIN and text[-(chars + TAIL_MARGIN):].startswith("ry-staple")  # the cut halves it
    tail = redacted_tail(text, chars)
    assert "staple" not in tail and "AAAA" not in tail
    assert tail == f"-----BEGIN PRIVATE KEY-----{R}-----END PRIVATE KEY-----\nRuntimeError: no database"
