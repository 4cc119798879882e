"""benchmarks/: every benchmark writes the figures it printed to results/<its name>.json through
results.write, and results.py renders benchmarks/README.md's table from those files. The scripts are
read, not run: what they measure takes minutes."""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest
from conftest import REPO

BENCHMARKS = REPO / "benchmarks"
SCRIPTS = sorted(path for path in BENCHMARKS.glob("*.py") if path.name != "results.py")


def load_results() -> ModuleType:
    """benchmarks/results.py as a module of its own (benchmarks/ is no package)."""
    spec = importlib.util.spec_from_file_location("benchmark_results", BENCHMARKS / "results.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def written_names(source: str) -> list[str]:
    """The names a script's calls of results.write give it (``from results import write`` then
    ``write(name, summary, figures)``, or ``import results`` then ``results.write(...)``); a name that
    is no string literal is listed as its source text."""
    tree = ast.parse(source)
    from_results = any(isinstance(node, ast.ImportFrom) and node.module == "results" and any(a.name == "write" for a in node.names)
                       for node in ast.walk(tree))
    names = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = ((from_results and isinstance(func, ast.Name) and func.id == "write")
                  or (isinstance(func, ast.Attribute) and func.attr == "write" and isinstance(func.value, ast.Name)
                      and func.value.id == "results"))
        if called and len(node.args) + len(node.keywords) == 3:
            first = node.args[0] if node.args else next(k.value for k in node.keywords if k.arg == "name")
            names.append(first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ast.unparse(first))
    return names


def test_the_benchmarks_are_found():
    assert {path.stem for path in SCRIPTS} >= {"doctor_overhead", "fusion_read", "healthcheck", "load", "noise", "pid_probe",
                                               "record_overhead", "verification"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_every_benchmark_writes_its_results_under_its_own_name(script: Path):
    assert written_names(script.read_text(encoding="utf-8")) == [script.stem], (
        f"{script.name} must call results.write({script.stem!r}, summary, figures) once")


@pytest.mark.parametrize(("source", "names"), [
    ("from results import write\nwrite('load', [], {})\n", ["load"]),
    ("from results import write\nprint(f\"wrote {write('noise', summary, figures)}\")\n", ["noise"]),
    ("import results\nresults.write('pid_probe', summary, figures)\n", ["pid_probe"]),
    ("import results\nresults.write(NAME, summary, figures)\n", ["NAME"]),
    ("def write(a, b, c): pass\nwrite('load', [], {})\n", []),  # not results' write
    ("print('ratio 1.2 (target <= 1.5) OK')\n", []),
])
def test_the_check_tells_a_call_of_results_write_from_none(source: str, names: list[str]):
    assert written_names(source) == names


def test_results_writes_the_figures_and_renders_the_table_between_the_markers(tmp_path: Path, monkeypatch):
    results = load_results()
    monkeypatch.setattr(results, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(results, "README", tmp_path / "README.md")
    head, tail = "# Benchmarks\n\nprose before\n\n", "\n\nprose after\n"
    (tmp_path / "README.md").write_text(f"{head}{results.START}\n| stale | table |\n{results.END}{tail}", encoding="utf-8")

    beta = results.write("beta", ["ratio 2.00 (target <= 1.5) OVER"], {"ratio": 2.0})
    alpha = results.write("alpha", ["first line", "second line"], {"median_ms": [1.5, 2.5]})
    assert beta == tmp_path / "results" / "beta.json"
    document = json.loads(alpha.read_text(encoding="utf-8"))
    assert document["benchmark"] == "alpha"
    assert document["summary"] == ["first line", "second line"]
    assert document["figures"] == {"median_ms": [1.5, 2.5]}
    assert document["date"].endswith(" UTC")
    assert {"cpu", "cpus", "load_average", "python"} <= set(document["machine"])
    assert "commit" in document

    results.render()
    text = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert text.startswith(head + results.START + "\n") and text.endswith(results.END + tail)
    assert "stale" not in text
    rows = [line for line in text.splitlines() if line.startswith("| [`")]
    assert [row.split("`")[1] for row in rows] == ["alpha.py", "beta.py"]
    where = f"{document['date']}, {document['commit']}, {document['machine']['cpu']} ({document['machine']['cpus']} CPUs, "
    assert rows[0] == (f"| [`alpha.py`](alpha.py) | {where}load {document['machine']['load_average'][0]}) | "
                       "first line<br>second line |")
    assert rows[1].endswith("| ratio 2.00 (target <= 1.5) OVER |")

    results.render()
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == text


def test_the_readme_table_is_rendered_from_the_results_folder():
    results = load_results()
    text = results.README.read_text(encoding="utf-8")
    assert f"{results.START}\n{results.table()}{results.END}" in text, (
        "benchmarks/README.md is stale: run python benchmarks/results.py")


def test_every_result_is_a_benchmark_the_readme_links_to():
    results = load_results()
    text = results.README.read_text(encoding="utf-8")
    for script in SCRIPTS:
        assert f"[`{script.name}`]({script.name})" in text, f"benchmarks/README.md does not list {script.name}"
    for path in sorted(results.RESULTS.glob("*.json")):
        assert json.loads(path.read_text(encoding="utf-8"))["benchmark"] == path.stem
        assert (BENCHMARKS / f"{path.stem}.py").is_file(), f"{path.name} names no benchmark"
