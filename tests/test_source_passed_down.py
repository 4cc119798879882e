"""Settings a wrapper passes down: parsed arguments built in one module (``add_argument`` defaults),
updated with the keywords the service gives the wrapper's constructor (``**kwargs``), and handed
through constructors (``super().__init__``) to the helper that builds each Config; a service script
given with --source is followed into its imports. Fixture sources are written here, nothing is
imported or run."""

import os
import textwrap

import pytest
from conftest import report_json, run_doctor
from paddle_doctor.source import read_source

NO_PROBES = ("--pid", "none", "--no-paddle", "--no-gpu")

# A wrapper package laid out as OCR toolkits are: a settings module with the parser and the helper
# that builds every predictor, one class per model, a system class that builds them, and the public
# class that updates the parsed defaults with its keywords. The package puts its own folder on
# sys.path and imports its modules without the package's name (``tools.infer.settings``).
TOOLKIT = {
    "ocrkit/__init__.py": "from .ocr import *\n",
    "ocrkit/tools/__init__.py": "",
    "ocrkit/tools/infer/settings.py": """\
        import argparse

        from paddle import inference


        def as_bool(text):
            return text.lower() in ("1", "true", "yes")


        def make_parser():
            parser = argparse.ArgumentParser()
            parser.add_argument("--use_gpu", type=as_bool, default=True)
            parser.add_argument("--enable_mkldnn", type=as_bool, default=False)
            parser.add_argument("--cpu_threads", type=int, default=10)
            parser.add_argument("--use_angle", type=as_bool, default=False)
            return parser


        def read_flags():
            return make_parser().parse_args()


        def build_predictor(flags, kind):
            config = inference.Config(kind + "/inference.pdmodel", kind + "/inference.pdiparams")
            if flags.use_gpu:
                config.enable_use_gpu(500, 0)
            else:
                config.disable_gpu()
                if flags.enable_mkldnn:
                    config.enable_mkldnn()
                if hasattr(flags, "cpu_threads"):
                    config.set_cpu_math_library_num_threads(flags.cpu_threads)
            return inference.create_predictor(config)
        """,
    "ocrkit/tools/infer/detect.py": """\
        import copy

        import tools.infer.settings as settings


        class Detector:
            def __init__(self, flags):
                self.use_gpu = flags.use_gpu
                for style in ("bold",):
                    setattr(self, style, True)
                self.predictor = settings.build_predictor(copy.deepcopy(flags), "det")


        if __name__ == "__main__":
            Detector(settings.read_flags())
        """,
    "ocrkit/tools/infer/recognize.py": """\
        import tools.infer.settings as settings


        class Recognizer:
            def __init__(self, flags):
                self.predictor = settings.build_predictor(flags, "rec")


        class AngleClassifier:
            def __init__(self, flags):
                self.predictor = settings.build_predictor(flags, "cls")
        """,
    "ocrkit/tools/infer/system.py": """\
        from tools.infer import detect, recognize


        class OcrSystem:
            def __init__(self, flags):
                self.detector = detect.Detector(flags)
                self.recognizer = recognize.Recognizer(flags)
                if flags.use_angle:
                    self.classifier = recognize.AngleClassifier(flags)
        """,
    "ocrkit/ocr.py": """\
        import os
        import sys

        sys.path.append(os.path.dirname(__file__))

        from tools.infer.settings import make_parser  # noqa: E402
        from tools.infer.system import OcrSystem  # noqa: E402


        def parse_args(main=True):
            parser = make_parser()
            parser.add_argument("--lang", type=str, default="en")
            if main:
                return parser.parse_args()
            return parser.parse_args([])


        def gpu_available(wanted):
            import paddle
            return wanted and paddle.is_compiled_with_cuda()


        class OcrEngine(OcrSystem):
            def __init__(self, **kwargs):
                params = parse_args(main=False)
                params.__dict__.update(**kwargs)
                params.use_gpu = gpu_available(params.use_gpu)
                super().__init__(params)


        def main():
            flags = parse_args()
            return OcrEngine(**vars(flags))
        """,
}


def write_tree(folder, files):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def service(tmp_path, call):
    site, app = tmp_path / "site", tmp_path / "app"
    write_tree(site, TOOLKIT)
    write_tree(app, {"serve.py": f"from ocrkit import OcrEngine\n\nengine = {call}\n"})
    return app / "serve.py", site


def made(source, name):
    return [(s.value, s.condition) for s in source.settings if s.name == name]


@pytest.mark.parametrize("call, threads, onednn", [
    ("OcrEngine(cpu_threads=16, use_angle=True)", 16, []),
    ("OcrEngine()", 10, []),
    ("OcrEngine(enable_mkldnn=True)", 10, [(True, "not (flags.use_gpu)")]),
])
def test_a_keyword_given_to_the_wrapper_overrides_the_argparse_default_it_passes_down(tmp_path, call, threads, onednn):
    script, site = service(tmp_path, call)
    source = read_source([str(script)], search=[str(script.parent), str(site)])
    # use_gpu is what a function of the wrapper returns: both branches stay, each with its condition
    assert made(source, "device") == [("gpu", "flags.use_gpu"), ("cpu", "not (flags.use_gpu)")]
    assert made(source, "threads") == [(threads, "not (flags.use_gpu)")]
    assert made(source, "onednn") == onednn


def test_each_model_the_wrapper_builds_is_a_predictor_with_the_calls_from_the_service(tmp_path):
    script, site = service(tmp_path, "OcrEngine(cpu_threads=16, use_angle=True)")
    source = read_source([str(script)], search=[str(script.parent), str(site)])
    infer = site / "ocrkit" / "tools" / "infer"
    chains = sorted([os.path.relpath(str(location), tmp_path) for location in predictor.chain] for predictor in source.predictors)
    # the Detector's own __main__ block does not run: the module is imported, not run as a script;
    # ocr.main() (a console script's entry) is not the service's way in either
    assert chains == [
        ["app/serve.py:3", "site/ocrkit/ocr.py:28", "site/ocrkit/tools/infer/system.py:6",
         "site/ocrkit/tools/infer/detect.py:11", "site/ocrkit/tools/infer/settings.py:24"],
        ["app/serve.py:3", "site/ocrkit/ocr.py:28", "site/ocrkit/tools/infer/system.py:7",
         "site/ocrkit/tools/infer/recognize.py:6", "site/ocrkit/tools/infer/settings.py:24"],
        ["app/serve.py:3", "site/ocrkit/ocr.py:28", "site/ocrkit/tools/infer/system.py:9",
         "site/ocrkit/tools/infer/recognize.py:11", "site/ocrkit/tools/infer/settings.py:24"],
    ]
    assert {str(predictor.location) for predictor in source.predictors} == {f"{infer / 'settings.py'}:24"}
    assert all(setting.predictors == [1, 2, 3] for setting in source.settings)


def test_the_wrapper_read_alone_gives_its_defaults(tmp_path):
    """No service calls it: the console script's ``OcrEngine(**vars(flags))`` passes the parsed defaults on."""
    _, site = service(tmp_path, "None")
    source = read_source([str(site / "ocrkit")])
    assert made(source, "threads") == [(10, "not (flags.use_gpu)")]
    assert made(source, "onednn") == []


@pytest.mark.parametrize("assignment", ["params.cpu_threads = 4", "setattr(params, name, 4)"])
def test_an_argument_assigned_after_parsing_is_not_known(tmp_path, assignment):
    script, site = service(tmp_path, "OcrEngine(cpu_threads=16)")
    ocr = site / "ocrkit" / "ocr.py"
    ocr.write_text(ocr.read_text().replace("super().__init__(params)", f"name = 'x'\n        {assignment}\n        super().__init__(params)"))
    source = read_source([str(script)], search=[str(script.parent), str(site)])
    assert [(s.value, s.evaluated) for s in source.settings if s.name == "threads"] == [(None, False)]


def test_a_service_script_given_with_source_is_followed_into_its_imports_on_this_interpreters_path(tmp_path):
    script, site = service(tmp_path, "OcrEngine(cpu_threads=16)")
    report = report_json(run_doctor("--source", str(script), "--json", *NO_PROBES, env={"PYTHONPATH": str(site)}))
    source = report["service"]["source"]
    assert source["files"][0] == str(script)
    assert sorted(os.path.relpath(file, site) for file in source["imported"]) == [
        "ocrkit/__init__.py", "ocrkit/ocr.py", "ocrkit/tools/__init__.py", "ocrkit/tools/infer/detect.py",
        "ocrkit/tools/infer/recognize.py", "ocrkit/tools/infer/settings.py", "ocrkit/tools/infer/system.py"]
    assert source["imports_from"].startswith("this interpreter's sys.path (")
    threads = next(s for s in report["service"]["settings"] if s["name"] == "threads")
    assert "16 if not (flags.use_gpu)" in threads["detail"]
    text = run_doctor("--source", str(script), *NO_PROBES, env={"PYTHONPATH": str(site)}).stdout
    assert "source: 8 files read (7 of them imported, looked for on this interpreter's sys.path (" in " ".join(text.split())


def test_a_package_whose_code_never_names_paddle_is_not_followed(tmp_path):
    write_tree(tmp_path / "site", {"heavy/__init__.py": "from . import part\n", "heavy/part.py": "import json\n",
                                   "engine/__init__.py": "from paddle import inference\n"})
    write_tree(tmp_path / "app", {"serve.py": "import heavy\nimport engine\n"})
    script = tmp_path / "app" / "serve.py"
    source = read_source([str(script)], search=[str(script.parent), str(tmp_path / "site")])
    assert [os.path.relpath(file, tmp_path) for file in source.imported] == ["site/engine/__init__.py"]
