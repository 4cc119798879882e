"""The editors of YAML files, Dockerfiles and Kubernetes manifests: each case under tests/fixtures/fix/<kind>/
is an input, the edits the table below makes to it, and the file they must give byte for byte; editing that
again changes nothing, YAML still loads, and the edits that cannot be made safely are refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from paddle_doctor.fix.dockerfile import set_env
from paddle_doctor.fix.manifest import set_container_env
from paddle_doctor.fix.text import TextEdit
from paddle_doctor.fix.yaml_edit import EditRefused, plain_scalar, set_key, set_key_everywhere

FIXTURES = Path(__file__).parent / "fixtures" / "fix"
Editor = Callable[[str, str], list[TextEdit]]

# each case: the edits made to its input, all computed on the input as read (as `fix` makes them)
CASES: dict[str, list[Editor]] = {
    "yaml/service_comments": [
        lambda text, source: set_key(text, ("threads",), 2, "PD-CPU-010 threads 8 -> 2", source),
        lambda text, source: set_key(text, ("onednn",), True, "PD-CPU-004 onednn false -> true", source),
        lambda text, source: set_key(text, ("batch", "workers"), 1, "workers 1", source),
    ],
    "yaml/service_new_section": [
        lambda text, source: set_key(text, ("predictor", "threads"), 2, "threads 2", source),
        lambda text, source: set_key(text, ("workers",), 1, "workers 1", source),
        lambda text, source: set_key(text, ("serving", "timeout_ms"), 20, "timeout 20", source),
    ],
    "yaml/rapidocr_config": [
        lambda text, source: set_key(text, ("Global", "cpu_math_library_num_threads"), 2, "threads -1 -> 2", source),
    ],
    "yaml/rapidocr_sections": [
        lambda text, source: set_key_everywhere(text, "intra_op_num_threads", 2, "threads -> 2", source),
    ],
    "yaml/rapidocr_anchor": [
        lambda text, source: set_key_everywhere(text, "cpu_math_library_num_threads", 2, "threads -1 -> 2", source),
    ],
    "yaml/quoted": [
        lambda text, source: set_key(text, ("device",), "gpu:0", "device", source),
        lambda text, source: set_key(text, ("precision",), "it's int8", "precision", source),
        lambda text, source: set_key(text, ("label",), "a: b", "label", source),
        lambda text, source: set_key(text, ("threads",), 2, "threads", source),
    ],
    "yaml/crlf": [
        lambda text, source: set_key(text, ("threads",), 2, "threads 8 -> 2", source),
        lambda text, source: set_key(text, ("onednn",), True, "onednn", source),
        lambda text, source: set_key(text, ("batch", "timeout_ms"), 10, "timeout", source),
    ],
    "dockerfile/multistage": [
        lambda text, source: set_env(text, "OMP_NUM_THREADS", "2", "threads 8 -> 2", source),
        lambda text, source: set_env(text, "FLAGS_use_mkldnn", "1", "onednn", source),
        lambda text, source: set_env(text, "MKL_NUM_THREADS", "2", "mkl threads", source),
    ],
    "dockerfile/no_env": [
        lambda text, source: set_env(text, "OMP_NUM_THREADS", "2", "threads 2", source),
    ],
    "dockerfile/legacy": [
        lambda text, source: set_env(text, "OMP_NUM_THREADS", "2", "threads 8 -> 2", source),
        lambda text, source: set_env(text, "FLAGS_use_mkldnn", "a b", "spaces", source),
        lambda text, source: set_env(text, "KMP_AFFINITY", "granularity=fine,compact", "affinity", source),
    ],
    "manifest/deployment_env": [
        lambda text, source: set_container_env(text, "OMP_NUM_THREADS", "2", "threads", source, None),
        lambda text, source: set_container_env(text, "FLAGS_use_mkldnn", "1", "onednn", source, None),
        lambda text, source: set_container_env(text, "MKL_NUM_THREADS", "2", "mkl", source, None),
    ],
    "manifest/deployment_no_env": [
        lambda text, source: set_container_env(text, "OMP_NUM_THREADS", "2", "threads", source, "det"),
    ],
    "manifest/two_containers": [
        lambda text, source: set_container_env(text, "OMP_NUM_THREADS", "2", "threads", source, "rec"),
    ],
    "manifest/multi_document": [
        lambda text, source: set_container_env(text, "OMP_NUM_THREADS", "2", "threads", source, "ocr"),
    ],
}


def apply(text: str, edits: list[TextEdit]) -> str:
    ordered = sorted(edits, key=lambda edit: (edit.start, edit.end))
    for before, after in zip(ordered, ordered[1:]):
        assert before.end <= after.start and not (before.start == before.end == after.start == after.end), (before, after)
    for edit in reversed(ordered):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text


def read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


def inputs() -> list[Path]:
    return sorted(FIXTURES.glob("*/*.in.*"))


def test_each_input_has_its_table_entry_and_output():
    names = {f"{path.parent.name}/{path.name.split('.in.')[0]}" for path in inputs()}
    assert names == set(CASES)
    for path in inputs():
        assert path.with_name(path.name.replace(".in.", ".out.")).is_file(), path


@pytest.mark.parametrize("path", inputs(), ids=lambda path: f"{path.parent.name}/{path.name.split('.in.')[0]}")
def test_edits_give_the_expected_file(path: Path):
    case = f"{path.parent.name}/{path.name.split('.in.')[0]}"
    text = read(path)
    edits = [edit for editor in CASES[case] for edit in editor(text, path.name)]
    assert edits and all(edit.why for edit in edits)
    edited = apply(text, edits)
    assert edited == read(path.with_name(path.name.replace(".in.", ".out.")))
    assert [edit for editor in CASES[case] for edit in editor(edited, path.name)] == []
    if path.suffix == ".yaml":
        assert list(yaml.safe_load_all(edited)) != []
    if "\r\n" in text:
        assert edited.count("\n") == edited.count("\r\n")


def test_yaml_values_land_where_meant():
    text = read(FIXTURES / "yaml" / "service_comments.in.yaml")
    loaded = yaml.safe_load(apply(text, [edit for editor in CASES["yaml/service_comments"] for edit in editor(text, "s")]))
    assert (loaded["threads"], loaded["onednn"], loaded["batch"]) == (2, True, {"max_size": 4, "timeout_ms": 10, "workers": 1})


def test_manifest_values_land_in_the_container_named():
    text = read(FIXTURES / "manifest" / "two_containers.in.yaml")
    edited = apply(text, [edit for editor in CASES["manifest/two_containers"] for edit in editor(text, "m")])
    proxy, rec = yaml.safe_load(edited)["spec"]["template"]["spec"]["containers"]
    assert proxy == yaml.safe_load(text)["spec"]["template"]["spec"]["containers"][0]
    assert rec["env"] == [{"name": "LOG_LEVEL", "value": "info"}, {"name": "OMP_NUM_THREADS", "value": "2"}]
    assert rec["resources"] == yaml.safe_load(text)["spec"]["template"]["spec"]["containers"][1]["resources"]


@pytest.mark.parametrize(("value", "written"), [
    (2, "2"), (-1, "-1"), (True, "true"), (False, "false"), (None, "null"), (0.5, "0.5"),
    ("fp32", "fp32"), ("8", "'8'"), ("true", "'true'"), ("a: b", "'a: b'"), ("x # y", "'x # y'"),
    ("", "''"), (" padded", "' padded'"), ("two\nlines", '"two\\nlines"'),
])
def test_plain_scalar(value, written):
    assert plain_scalar(value) == written
    assert yaml.safe_load(f"k: {written}")["k"] == value


def test_a_key_found_nowhere_is_no_edit():
    assert set_key_everywhere("Global:\n  use_det: true\n", "intra_op_num_threads", 2, "threads", "config.yaml") == []


def test_an_empty_file_gets_the_key():
    assert apply("", set_key("", ("Global", "threads"), 2, "threads", "s.yaml")) == "Global:\n  threads: 2\n"


DEPLOYMENT = """kind: Deployment
spec:
  template:
    spec:
      containers:
        - name: ocr
          env:
            - name: OMP_NUM_THREADS
              valueFrom:
                configMapKeyRef: {name: settings, key: threads}
          resources:
            requests:
              cpu: "3"
            limits:
              cpu: "4"
        - name: proxy
"""

REFUSED: list[tuple[str, Callable[[], object]]] = [
    ("a flow mapping", lambda: set_key("Global: {cpu_math_library_num_threads: -1}\n", ("Global", "cpu_math_library_num_threads"), 2, "t", "config.yaml")),
    ("expected a scalar", lambda: set_key("threads: [1, 2]\n", ("threads",), 2, "t", "service.yaml")),
    ("expected a mapping", lambda: set_key("Global: 3\n", ("Global", "threads"), 2, "t", "service.yaml")),
    ("alias", lambda: set_key("base: &b 8\nthreads: *b\n", ("threads",), 2, "t", "service.yaml")),
    ("anchor or tag", lambda: set_key("threads: &t 8\n", ("threads",), 2, "t", "service.yaml")),
    ("2 YAML documents", lambda: set_key("threads: 8\n---\nthreads: 4\n", ("threads",), 2, "t", "service.yaml")),
    ("set 2 times", lambda: set_key("threads: 8\nthreads: 4\n", ("threads",), 2, "t", "service.yaml")),
    ("not valid YAML", lambda: set_key("threads: [8\n", ("threads",), 2, "t", "service.yaml")),
    ("a flow mapping", lambda: set_key_everywhere("Det: {use_cuda: false}\n", "use_cuda", True, "t", "config.yaml")),
    ("repeated by an alias under another key", lambda: set_key_everywhere(
        "Global:\n  threads: &t 8\nDet:\n  threads: *t\n  batch: *t\n", "threads", 2, "t", "config.yaml")),
    ("valueFrom", lambda: set_container_env(DEPLOYMENT, "OMP_NUM_THREADS", "2", "t", "deploy.yaml", "ocr")),
    ("2 containers (Deployment/?: ocr, Deployment/?: proxy)", lambda: set_container_env(DEPLOYMENT, "X", "2", "t", "deploy.yaml", None)),
    ("no container named web", lambda: set_container_env(DEPLOYMENT, "X", "2", "t", "deploy.yaml", "web")),
    ("2 containers named ocr", lambda: set_container_env(DEPLOYMENT + "---\n" + DEPLOYMENT, "X", "2", "t", "deploy.yaml", "ocr")),
    ("set from a variable", lambda: set_env("FROM python:3.10\nARG THREADS=4\nENV OMP_NUM_THREADS=${THREADS}\n", "OMP_NUM_THREADS", "2", "t", "Dockerfile")),
    ("escape directive", lambda: set_env("# escape=`\nFROM python:3.10\nENV A=1\n", "A", "2", "t", "Dockerfile")),
    ("no FROM", lambda: set_env("ENV A=1\n", "A", "2", "t", "Dockerfile")),
]


@pytest.mark.parametrize(("message", "edit"), REFUSED, ids=[f"{index}-{message}" for index, (message, _) in enumerate(REFUSED)])
def test_unsafe_edits_are_refused(message, edit):
    with pytest.raises(EditRefused) as refused:
        edit()
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)
    assert str(refused.value).split(":")[0] in ("config.yaml", "service.yaml", "deploy.yaml", "Dockerfile")


def test_only_the_final_stage_is_edited():
    text = "FROM python:3.10 AS build\nENV OMP_NUM_THREADS=8\nFROM python:3.10-slim\nCMD [\"serve\"]\n"
    assert apply(text, set_env(text, "OMP_NUM_THREADS", "8", "t", "Dockerfile")) == (
        "FROM python:3.10 AS build\nENV OMP_NUM_THREADS=8\nFROM python:3.10-slim\nENV OMP_NUM_THREADS=8\nCMD [\"serve\"]\n")


@pytest.mark.parametrize("run", ['RUN cat <<< "x" > f', "RUN echo $((1<<EOF))", "RUN cat <<EOF > /x\nENV THREADS=9\nEOF"],
                         ids=["here-string", "shift", "heredoc"])
def test_only_a_real_heredoc_hides_the_lines_after_it(run):
    text = f"FROM python:3.11\n{run}\nENV THREADS=8\n"
    (edit,) = set_env(text, "THREADS", "2", "threads", "Dockerfile")
    assert apply(text, [edit]).endswith("\nENV THREADS=2\n")  # the instruction that runs last is the one changed
