"""Settings a YAML-configured engine passes down as a mapping: the file read beside the package, the
value of a name where it is used (reassigned on the way), ``**kwargs`` no caller fills, each model's
section passed through its own constructor, and what a helper changes in the mapping not known
afterwards. Fixture sources are written here; nothing is imported or run."""

import textwrap

import pytest
from paddle_doctor.source import read_source
from test_source_branches import GUARDED_ENGINE
from test_source_passed_down import write_tree

ENGINE = {
    "yamlocr/__init__.py": "from .main import Ocr\n",
    "yamlocr/config.yaml": """\
        Det:
          model: det.json
          params: det.pdiparams
          use_cuda: false
          gpu_mem: 500
          cpu_math_library_num_threads: &threads {threads}
        Rec:
          model: rec.json
          params: rec.pdiparams
          use_cuda: false
          gpu_mem: 500
          cpu_math_library_num_threads: *threads
        """,
    "yamlocr/utils.py": """\
        import yaml


        def read_yaml(path):
            with open(path, "rb") as handle:
                data = yaml.safe_load(handle)
            return data


        def with_model_paths(config):
            config["Det"]["{changed}"] = "/opt/" + str(config["Det"]["model"])
            return config
        """,
    "yamlocr/session.py": "import os\n\nfrom paddle import inference\n\n\n" + textwrap.dedent(GUARDED_ENGINE),
    "yamlocr/models.py": """\
        from .session import Engine


        class Detector:
            def __init__(self, config):
                self.session = Engine(config)


        class Recognizer:
            def __init__(self, config):
                self.session = Engine(config)
        """,
    "yamlocr/main.py": """\
        from pathlib import Path

        from .models import Detector, Recognizer
        from .utils import read_yaml, with_model_paths

        HERE = Path(__file__).resolve().parent
        DEFAULT_CONFIG = HERE / "config.yaml"


        class Ocr:
            def __init__(self, config_path=None, **kwargs):
                if config_path is not None:
                    config = read_yaml(config_path)
                else:
                    config = read_yaml(DEFAULT_CONFIG)
                config = with_model_paths(config)
                if kwargs:
                    config = dict(config, **kwargs)
                self.det = Detector(config["Det"])
                self.rec = Recognizer(config["Rec"])
        """,
}


def read(tmp_path, threads, changed="model", call="Ocr()"):
    files = {name: textwrap.dedent(text).replace("{threads}", str(threads)).replace("{changed}", changed)
             for name, text in ENGINE.items()}
    write_tree(tmp_path / "site", files)
    write_tree(tmp_path / "app", {"serve.py": f"from yamlocr import Ocr\n\nengine = {call}\n"})
    script = tmp_path / "app" / "serve.py"
    return read_source([str(script)], search=[str(script.parent), str(tmp_path / "site")])


def made(source, name):
    return [(s.value, s.condition, s.predictors) for s in source.settings if s.name == name]


GUARD = "1 <= threads <= os.cpu_count()"  # the host's CPUs are not known from the source


@pytest.mark.parametrize("threads, made_threads", [(-1, []), (4, [(4, GUARD, [1, 2])])])
def test_the_yaml_beside_the_package_decides_the_branch_and_the_guarded_thread_call(tmp_path, threads, made_threads):
    source = read(tmp_path, threads)
    assert len(source.predictors) == 2
    assert made(source, "device") == [("cpu", None, [1, 2])]  # use_cuda: false, the GPU branch never runs
    assert made(source, "threads") == made_threads  # -1: the guard skips the call, Paddle's default stands


def test_an_item_a_helper_changes_is_not_known_afterwards(tmp_path):
    source = read(tmp_path, 4, changed="use_cuda")
    # the detector's use_cuda was changed to something not known: its branch is conditional; the
    # threads of both and the recognizer's section stay as the file says
    assert [(value, condition) for value, condition, _ in made(source, "device")] == [
        ("gpu", "config['use_cuda']"), ("cpu", "not (config['use_cuda'])")]
    assert made(source, "threads") == [(4, GUARD, [1, 2])]


def test_keywords_the_service_passes_in_kwargs_make_the_mapping_not_known(tmp_path):
    source = read(tmp_path, 4, call="Ocr(det_use_cuda=True)")
    assert [(value, evaluated) for value, evaluated in ((s.value, s.evaluated) for s in source.settings if s.name == "threads")] == [(None, False)]
