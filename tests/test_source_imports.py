"""The service followed into its imports: a wrapper package in a site folder, imported by the
service's script, read where its interpreter would find it; each path of calls to a Config is a
predictor, and arguments passed from the caller (in another module) are followed. Fixture sources
are written here; nothing is imported or run but the script started for --pid."""

import os
import subprocess
import sys
import textwrap

import pytest
from conftest import report_json, run_doctor
from paddle_doctor.source import read_source
from paddle_doctor.source.imports import follow, locate, search_path, site_folders

NO_PROBES = ("--no-paddle", "--no-gpu")

WRAPPER = {
    "ocrwrap/__init__.py": "from .pipeline import Pipeline\n",
    "ocrwrap/engine.py": """\
        import multiprocessing


        class Session:
            def __init__(self, model, use_gpu=False, threads=None):
                from paddle import inference

                config = inference.Config(model + ".json", model + ".pdiparams")
                if use_gpu:
                    config.enable_use_gpu(500, 0)
                else:
                    config.disable_gpu()
                    config.set_cpu_math_library_num_threads(threads or multiprocessing.cpu_count())
                self.predictor = inference.create_predictor(config)
        """,
    "ocrwrap/pipeline.py": """\
        from .engine import Session


        class Pipeline:
            def __init__(self, cpu_threads=10):
                self.det = Session("det", threads=cpu_threads)
                self.rec = Session("rec", threads=cpu_threads)
        """,
}
SCRIPT = """\
    import sys
    import time

    import ocrwrap


    def serve():
        return ocrwrap.Pipeline(cpu_threads=4)


    print("ready", flush=True)
    time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
    """


def write_tree(folder, files):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.fixture
def service(tmp_path):
    site, app = tmp_path / "site", tmp_path / "app"
    write_tree(site, WRAPPER)
    write_tree(app, {"serve.py": SCRIPT})
    return app / "serve.py", site


def test_the_configs_a_wrapper_in_a_site_folder_builds_are_found_from_the_script(service):
    script, site = service
    source = read_source([str(script)], search=[str(script.parent), str(site)])
    engine = str(site / "ocrwrap" / "engine.py")
    assert sorted(os.path.relpath(file, site) for file in source.imported) == [
        "ocrwrap/__init__.py", "ocrwrap/engine.py", "ocrwrap/pipeline.py"]
    assert [(p.id, str(p.location), p.function) for p in source.predictors] == [
        (1, f"{engine}:8", "Session.__init__"), (2, f"{engine}:8", "Session.__init__")]
    det, rec = source.predictors
    assert [str(location) for location in det.chain] == [
        f"{script}:8", f"{site}/ocrwrap/pipeline.py:6", f"{engine}:8"]
    assert [location.line for location in rec.chain] == [8, 7, 8] and det.caller == "serve"
    settings = {(s.name, s.value, s.condition) for s in source.settings}
    # use_gpu keeps its keyword default (no caller passes it): the CPU branch runs, the GPU one never
    assert settings == {("device", "cpu", None), ("threads", 4, None)}
    assert all(s.predictors == [1, 2] for s in source.settings)


def test_without_a_search_path_only_the_script_is_read(service):
    script, _ = service
    source = read_source([str(script)])
    assert (source.files, source.imported, source.predictors) == ([str(script)], [], [])


def test_following_imports_is_bounded_and_says_how_many_were_left_out(tmp_path):
    files = {f"many/m{index}.py": f"import many.m{index + 1}\n" for index in range(10)}
    write_tree(tmp_path, {"many/__init__.py": "", **files, "paddle/__init__.py": "", "start.py": "import many.m0, paddle\n"})
    import ast

    from paddle_doctor.source.imports import ImportedFile

    start = [ImportedFile(str(tmp_path / "start.py"), str(tmp_path))]
    imports = follow(start, [str(tmp_path)], lambda file: ast.parse(open(file).read()), most=4)
    assert [os.path.relpath(item.file, tmp_path) for item in imports.found] == [
        "many/__init__.py", "many/m0.py", "many/m1.py", "many/m2.py"]
    assert imports.left_out == 1  # m3, found when m2 was read; nothing past it is reached
    assert locate("paddle.inference", [str(tmp_path)]) == []   # Paddle's own package is not followed


def test_the_search_path_is_the_interpreters_own_never_by_running_it(tmp_path):
    base = tmp_path / "usr"
    (base / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {base}/bin\ninclude-system-site-packages = true\n")
    (tmp_path / "extra").mkdir()
    script = tmp_path / "app" / "serve.py"
    script.parent.mkdir()
    script.write_text("")
    assert site_folders(str(venv / "bin" / "python")) == [
        str(venv / "lib" / "python3.11" / "site-packages"), str(base / "lib" / "python3.11" / "site-packages")]
    assert search_path(str(script), str(venv / "bin" / "python"), {"PYTHONPATH": f"{tmp_path}/extra:relative"}) == [
        str(script.parent), str(tmp_path / "extra"),
        str(venv / "lib" / "python3.11" / "site-packages"), str(base / "lib" / "python3.11" / "site-packages")]
    (venv / "pyvenv.cfg").write_text(f"home = {base}/bin\ninclude-system-site-packages = false\n")
    assert site_folders(str(venv / "bin" / "python")) == [str(venv / "lib" / "python3.11" / "site-packages")]


def test_with_pid_the_configs_inside_the_wrapper_the_service_imports_are_found(service):
    script, site = service
    process = subprocess.Popen([sys.executable, str(script), "120"], env={**os.environ, "PYTHONPATH": str(site)},
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        report = report_json(run_doctor("--pid", str(process.pid), "--json", *NO_PROBES))
    finally:
        process.kill()
        process.wait()
    service_report = report["service"]
    assert service_report["source"]["files"][0] == str(script)
    engine = str(site / "ocrwrap" / "engine.py")
    predictors = [(p["built_by"], p["origin"]["builder"]["file"], p["origin"]["builder"]["line"], p["origin"]["service"]["file"])
                  for p in service_report["predictors"]]
    assert predictors == [("source", engine, 8, str(script))] * 2
    threads = next(s for s in service_report["settings"] if s["name"] == "threads")
    assert (threads["value"], threads["origin"]) == (4, "source")


def test_a_package_that_builds_predictors_is_read_before_the_rest_of_a_big_wrapper(tmp_path):
    """A wrapper whose __init__ imports many modules before its engine (PaddleNLP's before taskflow/task.py):
    the modules of the package that builds a predictor are read first, so the bound runs out in the rest."""
    many = {f"nlpkit/models/m{index}.py": "import numpy\nimport nlpkit.models.shared\n" for index in range(30)}
    write_tree(tmp_path / "site", {
        "nlpkit/__init__.py": "".join(f"from .models import m{index}\n" for index in range(30)) + "from .flow import Flow\n",
        "nlpkit/models/__init__.py": "", "nlpkit/models/shared.py": "import paddle\n", **many,
        "nlpkit/flow/__init__.py": "from .flow import Flow\n",
        "nlpkit/flow/flow.py": "from .tasks import ner\n\n\nclass Flow:\n    def __init__(self, task):\n        self.task = ner.Ner()\n",
        "nlpkit/flow/tasks/__init__.py": "",
        "nlpkit/flow/tasks/ner.py": "from .task import Task\n\n\nclass Ner(Task):\n    pass\n",
        "nlpkit/flow/tasks/task.py": """\
            import paddle.inference as paddle_infer


            class Task:
                def __init__(self):
                    config = paddle_infer.Config("model.pdmodel", "model.pdiparams")
                    config.set_cpu_math_library_num_threads(6)
                    self.predictor = paddle_infer.create_predictor(config)
            """,
    })
    write_tree(tmp_path / "app", {"serve.py": "from nlpkit import Flow\n\nner = Flow('ner')\n"})
    script, site = tmp_path / "app" / "serve.py", tmp_path / "site"
    import ast

    from paddle_doctor.source.imports import ImportedFile

    start = [ImportedFile(str(script), str(script.parent))]
    imports = follow(start, [str(script.parent), str(site)], lambda file: ast.parse(open(file).read()), most=8)
    read = [os.path.relpath(item.file, site) for item in imports.found]
    assert "nlpkit/flow/tasks/task.py" in read and imports.left_out > 0  # the bound ran out among the models
    models = [index for index, file in enumerate(read) if file.startswith("nlpkit/models/")]
    assert models and min(models) > read.index("nlpkit/flow/tasks/task.py")
    source = read_source([str(script)], search=[str(script.parent), str(site)])
    assert [(p.function, {s.value for s in source.settings if s.name == "threads"}) for p in source.predictors] == [("Task.__init__", {6})]
