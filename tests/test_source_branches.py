"""The source read branch by branch: a setting under an ``if`` carries its condition, the branch known
not to run is left out, each Config is its own predictor, and a conditional setting is a warning at
most. Fixture sources are written here; nothing is imported or run."""

import textwrap
from dataclasses import replace

import pytest
from conftest import run_doctor
from factories import AVX2_FLAGS, make_facts
from paddle_doctor.judge.findings import Status
from paddle_doctor.judge.registry import load_check
from paddle_doctor.render.service_lines import service_lines
from paddle_doctor.service.resolve import resolve_service
from paddle_doctor.source import read_source
from test_source import LINT


def read(tmp_path, code, name="app.py", environ=None):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return read_source([str(path)], environ)


def made(source, name):
    return [(s.value, s.condition, s.location.line) for s in source.settings if s.name == name]


def lint(source, rule):
    facts = replace(make_facts(flags=AVX2_FLAGS), service_source=source)
    (finding,) = load_check(LINT[rule]).run(facts)
    return finding


ARGPARSE_SERVICE = """\
    import argparse
    import paddle.inference as paddle_infer

    parser = argparse.ArgumentParser()
    parser.add_argument("--use_gpu", type=bool, default={use_gpu})
    parser.add_argument("--cpu_threads", type=int, default=10)
    args = parser.parse_args()

    config = paddle_infer.Config("m.json", "m.pdiparams")
    if args.use_gpu:
        config.enable_use_gpu(500, 0)
    else:
        config.disable_gpu()
        config.set_cpu_math_library_num_threads(args.cpu_threads)
    """


@pytest.mark.parametrize("use_gpu, device, threads", [("False", "cpu", [(10, None, 14)]), ("True", "gpu", [])])
def test_an_argparse_default_decides_the_branch_and_the_other_is_left_out(tmp_path, use_gpu, device, threads):
    source = read(tmp_path, ARGPARSE_SERVICE.format(use_gpu=use_gpu))
    assert [(value, condition) for value, condition, _ in made(source, "device")] == [(device, None)]
    assert made(source, "threads") == threads
    service, _ = resolve_service(source=source)
    assert service.device == device


def test_a_branch_whose_condition_is_not_known_is_conditional_and_never_merged(tmp_path):
    source = read(tmp_path, """\
        import paddle.inference as paddle_infer

        def create_predictor(args):
            config = paddle_infer.Config("m.json", "m.pdiparams")
            if args.use_gpu:
                config.enable_use_gpu(500, 0)
            elif args.use_xpu:
                config.enable_xpu()
            else:
                config.disable_gpu()
                if args.enable_mkldnn:
                    config.enable_mkldnn()
                    config.set_cpu_math_library_num_threads(args.cpu_threads)
            return paddle_infer.create_predictor(config)
        """)
    assert made(source, "device") == [("gpu", "args.use_gpu", 6), ("cpu", "not (args.use_gpu) and not (args.use_xpu)", 10)]
    assert made(source, "onednn") == [(True, "not (args.use_gpu) and not (args.use_xpu) and args.enable_mkldnn", 12)]
    service, origins = resolve_service(source=source)
    assert service.device == "cpu"  # Paddle's default stands: the source alone does not say which branch runs
    (device,) = [origin for origin in origins if origin.name == "device"]
    assert device.value is None
    assert "'gpu' if args.use_gpu (" in device.detail and "'cpu' if not (args.use_gpu) and not (args.use_xpu) (" in device.detail


def test_a_thread_call_guarded_by_a_constant_runs_or_not_as_the_constant_says(tmp_path):
    code = """\
        from paddle import inference
        THREADS = {threads}

        config = inference.Config("m.json", "m.pdiparams")
        if THREADS != -1 and 1 <= THREADS <= 64:
            config.set_cpu_math_library_num_threads(THREADS)
        """
    assert made(read(tmp_path, code.format(threads=-1)), "threads") == []
    assert made(read(tmp_path, code.format(threads=4)), "threads") == [(4, None, 6)]


def test_an_attribute_set_on_self_in_init_is_read_where_another_method_uses_it(tmp_path):
    code = """\
        import math
        import multiprocessing
        from paddle import inference

        class Engine:
            def __init__(self):
                self._num_threads = {threads}

            def build(self):
                config = inference.Config("m.json", "m.pdiparams")
                config.set_cpu_math_library_num_threads(self._num_threads)
                return inference.create_predictor(config)
        """
    (threads,) = read(tmp_path, code.format(threads=6)).settings
    assert (threads.value, threads.evaluated, threads.host_cpu_count) == (6, True, False)
    source = read(tmp_path, code.format(threads="math.ceil(multiprocessing.cpu_count() / 2)"))
    (threads,) = source.settings
    assert (threads.evaluated, threads.host_cpu_count) == (False, True)
    finding = lint(source, "PD-SRC-007")
    assert finding.status == Status.FAIL and [location.line for location in finding.locations] == [11]


def test_enable_memory_optim_false_is_memory_optim_off(tmp_path):
    source = read(tmp_path, """\
        from paddle import inference
        config = inference.Config("m.json", "m.pdiparams")
        config.enable_memory_optim(False)
        other = inference.Config("n.json", "n.pdiparams")
        other.enable_memory_optim()
        """)
    assert made(source, "memory_optim") == [(False, None, 3), (True, None, 5)]


def test_three_configs_in_one_module_are_three_predictors_each_with_its_own_settings(tmp_path):
    source = read(tmp_path, """\
        from paddle import inference

        def tune(config, threads):
            config.set_cpu_math_library_num_threads(threads)

        def build_det():
            det = inference.Config("det.json", "det.pdiparams")
            det.enable_mkldnn()
            tune(det, 2)
            return inference.create_predictor(det)

        def build_rec():
            rec = inference.Config("rec.json", "rec.pdiparams")
            rec.disable_mkldnn()
            return inference.create_predictor(rec)

        cls = inference.Config("cls.json", "cls.pdiparams")
        cls.switch_ir_optim(False)
        det = build_det()
        rec = build_rec()
        """)
    assert [(p.id, p.location.line, p.function) for p in source.predictors] == [(1, 7, "build_det"), (2, 13, "build_rec"), (3, 17, None)]
    assert [line.line for line in source.predictors[0].chain] == [19, 7]
    assert sorted((s.predictors, s.name, s.value) for s in source.settings) == [
        ([1], "onednn", True), ([1], "threads", 2), ([2], "onednn", False), ([3], "ir_optim", False)]


def test_a_helper_tuning_two_configs_names_both_predictors(tmp_path):
    source = read(tmp_path, """\
        from paddle import inference

        def tune(config):
            config.enable_mkldnn()

        a = inference.Config("a.json", "a.pdiparams")
        b = inference.Config("b.json", "b.pdiparams")
        tune(a)
        tune(b)
        """)
    (onednn,) = source.settings
    assert onednn.predictors == [1, 2]


CONDITIONAL_OFF = """\
    import os
    from paddle import inference

    config = inference.Config("m.json", "m.pdiparams")
    if os.environ.get("DEBUG_KERNELS"):
        config.disable_mkldnn()
    """


@pytest.mark.parametrize("environ, status, line", [
    (None, Status.PASS, None),                                # unset: the branch does not run
    ({"DEBUG_KERNELS": "1"}, Status.FAIL, 6),                 # set in the live process: it runs
])
def test_a_condition_on_the_environment_takes_the_live_value(tmp_path, environ, status, line):
    source = read(tmp_path, CONDITIONAL_OFF, environ=environ)
    assert made(source, "onednn") == ([] if line is None else [(False, None, line)])
    assert lint(source, "PD-SRC-001").status == status


@pytest.mark.parametrize("rule, code", [
    ("PD-SRC-001", "config.disable_mkldnn()"),
    ("PD-SRC-002", "config.switch_ir_optim(False)"),
    ("PD-SRC-003", "config.enable_tensorrt_engine(use_static=False)"),
    ("PD-SRC-007", "config.set_cpu_math_library_num_threads(os.cpu_count())"),
])
def test_a_setting_in_a_branch_that_may_not_run_is_a_warning_saying_so(tmp_path, rule, code):
    source = read(tmp_path, f"""\
        import os
        from paddle import inference

        def build(debug):
            config = inference.Config("m.json", "m.pdiparams")
            if debug:
                {code}
        """)
    finding = lint(source, rule)
    assert finding.status == Status.WARN, finding
    assert "in a branch that may not run" in finding.message and "only if debug" in finding.observed
    assert [location.line for location in finding.locations] == [7]


def test_with_no_config_found_the_source_rules_skip_saying_what_was_read(tmp_path):
    (tmp_path / "a.py").write_text("import flask\napp = flask.Flask(__name__)\n")
    (tmp_path / "b.py").write_text("x = 1\n")
    source = read_source([str(tmp_path)])
    for rule in LINT:
        if rule == "PD-SRC-008":  # what was read is its concern
            continue
        finding = lint(source, rule)
        assert finding.status == Status.SKIP, (rule, finding)
        assert finding.message.startswith("no paddle.inference.Config is built in the 2 Python files read (")
        assert "a.py" in finding.message and "b.py" in finding.message


def test_each_config_is_a_predictor_of_the_service_where_nothing_was_recorded(tmp_path):
    from paddle_doctor.report.report import service_summary

    facts = replace(make_facts(flags=AVX2_FLAGS), service_source=read(tmp_path, """\
        from paddle import inference

        class Engine:
            def __init__(self, threads=3):
                self.config = inference.Config("m.json", "m.pdiparams")
                self.config.set_cpu_math_library_num_threads(threads)

        def start():
            return Engine()

        other = inference.Config("n.json", "n.pdiparams")
        engine = start()
        """))
    first, second = service_summary(facts).predictors
    assert (first.id, first.built_by, first.config, first.runs.runs) == (1, "source", None, 0)
    assert (first.origin.builder.line, first.origin.builder.function) == (5, "Engine.__init__")
    assert (first.origin.service.line, first.origin.service.function) == (12, "<module>")
    assert (first.origin.threads_set_at.line, first.origin.threads_set_at.function) == (6, "Engine.__init__")
    assert [line.line for line in facts.service_source.predictors[0].chain] == [12, 9, 5]
    assert (second.id, second.origin.builder.line, second.origin.threads_set_at) == (2, 11, None)
    (threads,) = facts.service_source.settings
    assert (threads.value, threads.predictors) == (3, [1])
    lines = service_lines(service_summary(facts))
    assert lines[-2] == (f"predictor 1: built at {tmp_path}/app.py:5 from {tmp_path}/app.py:12, threads set at {tmp_path}/app.py:6 "
                         "(source; how it runs is known once it is recorded)")
    assert lines[-1].startswith("predictor 2: built at ") and "run" not in lines[-1].split("(")[0]


def test_the_flags_given_read_back_as_typed_on_one_line_in_every_report_for_people(tmp_path):
    from paddle_doctor.report.report import service_summary
    from paddle_doctor.service import ServiceOptions

    facts = replace(make_facts(flags=AVX2_FLAGS), service_source=read(tmp_path, """\
        from paddle import inference
        config = inference.Config("m.json", "m.pdiparams")
        config.enable_mkldnn()
        """))
    options = ServiceOptions(model="/srv/my model", threads=8, onednn=False)
    service, origins = resolve_service(options, facts.service_source)
    facts = replace(facts, service=service, service_origins=origins)
    lines = service_lines(service_summary(facts))
    assert "flags: --model '/srv/my model' --no-onednn --threads 8" in lines
    assert not any(line.startswith(("threads =", "model =", "onednn =")) for line in lines), lines
    assert facts.service.model == "/srv/my model"
    assert [(o.name, o.origin) for o in facts.service_origins if o.name == "model"] == [("model", "flag")]
    recorded = tmp_path / "facts.json"
    recorded.write_text(facts.to_json())
    text = run_doctor("--facts", str(recorded), "--threads", "8", "--no-onednn", env={"COLUMNS": "100"})
    assert "\n  flags: --model '/srv/my model' --no-onednn --threads 8\n" in text.stdout, text.stdout


GUARDED_ENGINE = """\
    class Engine:
        def __init__(self, config):
            options = inference.Config(config["model"], config["params"])
            if config["use_cuda"]:
                options.enable_use_gpu(config["gpu_mem"], 0)
            else:
                options.disable_gpu()
            threads = config.get("cpu_math_library_num_threads", -1)
            if threads != -1 and 1 <= threads <= os.cpu_count():
                options.set_cpu_math_library_num_threads(threads)
            self.predictor = inference.create_predictor(options)
    """
YAML_ENGINE = """\
    import os
    from pathlib import Path

    import yaml
    from paddle import inference

    ROOT = Path(__file__).resolve().parent


""" + GUARDED_ENGINE + """


    class App:
        def __init__(self):
            with open({path}) as file:
                settings = yaml.safe_load(file)
            self.det = Engine(settings["Det"])
    """
ENGINE_YAML = """\
    Global:
      threads: &threads {threads}
    Det:
      model: det.json
      params: det.pdiparams
      use_cuda: false
      gpu_mem: 500
      cpu_math_library_num_threads: *threads
    """


@pytest.mark.parametrize("threads, made_threads", [
    (-1, []),                                                    # the guard skips the call: Paddle's default
    (4, [(4, "1 <= threads <= os.cpu_count()", 19)]),            # made, if the host has 4 CPUs
])
def test_a_yaml_configured_engine_with_a_guarded_thread_call(tmp_path, threads, made_threads):
    (tmp_path / "config.yaml").write_text(textwrap.dedent(ENGINE_YAML.format(threads=threads)))
    source = read(tmp_path, YAML_ENGINE.format(path='ROOT / "config.yaml"'))
    assert made(source, "device") == [("cpu", None, 16)]           # use_cuda: false, the else branch
    assert made(source, "gpu_memory_pool_mb") == []
    assert made(source, "threads") == made_threads
    service, _ = resolve_service(source=source)
    assert service.device == "cpu" and service.threads is None


@pytest.mark.parametrize("path", [
    '"config.yaml"',                                   # relative to the working folder, not to the module
    'os.path.join(os.path.dirname(__file__), "..", "config.yaml")',  # outside the module's folder
])
def test_a_yaml_file_is_read_only_by_a_path_relative_to_the_module_inside_its_folder(tmp_path, path):
    (tmp_path / "config.yaml").write_text(textwrap.dedent(ENGINE_YAML.format(threads=4)))
    (tmp_path / "pkg").mkdir()
    source = read(tmp_path, YAML_ENGINE.format(path=path), name="pkg/app.py")
    assert made(source, "device") == [("gpu", 'config["use_cuda"]'.replace('"', "'"), 14),
                                      ("cpu", "not (config['use_cuda'])", 16)]


def test_a_yaml_file_beside_the_module_by_os_path(tmp_path):
    (tmp_path / "config.yaml").write_text(textwrap.dedent(ENGINE_YAML.format(threads=4)).replace("use_cuda: false", "use_cuda: true"))
    source = read(tmp_path, YAML_ENGINE.format(path='os.path.join(os.path.dirname(os.path.abspath(__file__)), "config.yaml")'))
    assert made(source, "device") == [("gpu", None, 14)]
    assert made(source, "gpu_memory_pool_mb") == [(500, None, 14)]
