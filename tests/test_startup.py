"""What each path imports, in a fresh interpreter: the healthcheck (run every probe period from the
service's own CPU quota) loads no measured section, no report, no command line; the measured
sections load where they are used, and a facts file or the facts schema still finds every type."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import fixture_root
from factories import graph_facts
from paddle_doctor.base.vocabulary import RecordStatus
from paddle_doctor.facts.service_record import ServiceRecord
from test_experiment_results import facts_data
from test_healthcheck import ROOT, Container, imported_modules

# (facts.predictor is not one: it holds the service's declared configuration beside the predictor's, both
# written from the one table of settings)
MEASURED_SECTIONS = ("paddle_doctor.facts.verification", "paddle_doctor.facts.graph", "paddle_doctor.facts.service_record",
                     "paddle_doctor.facts.loading")
# what only `check`, a measurement or a service's record needs
REPORT_AND_COMMAND_LINE = ("paddle_doctor.report.report", "paddle_doctor.report.measured", "paddle_doctor.report.profile", "paddle_doctor.recorder",
                           "paddle_doctor.cli", "paddle_doctor.render.text", "paddle_doctor.judge.wrapper_fix")
# the schema generator: the types carry their constraints from paddle_doctor.base.constraints
NOT_FOR_THE_HEALTHCHECK = (*MEASURED_SECTIONS, *REPORT_AND_COMMAND_LINE, "paddle_doctor.verify", "paddle_doctor.graph",
                           "paddle_doctor.source", "paddle_doctor.base.schema")
THIRD_PARTY = ("paddle", "click", "rich", "yaml", "numpy", "cpuinfo", "pynvml")


def fresh(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def loaded(modules: set[str], prefixes: tuple[str, ...]) -> set[str]:
    return {m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)}


def test_the_healthcheck_with_a_baseline_loads_only_what_it_uses(tmp_path):
    container = Container(tmp_path, ROOT)
    container.record("--threads", "1")
    modules = imported_modules("healthcheck", "--baseline", str(container.baseline))
    assert {"paddle_doctor.health.healthcheck", "paddle_doctor.judge.weighing", "paddle_doctor.checks.cpu_budget"} <= modules
    assert loaded(modules, NOT_FOR_THE_HEALTHCHECK) == set()
    assert loaded(modules, THIRD_PARTY) == set()
    assert loaded(modules, ("importlib.metadata", "concurrent", "subprocess", "argparse", "tempfile", "shutil")) == set()


def test_the_healthcheck_without_a_baseline_loads_no_report_and_no_command_line():
    """Without a baseline every registered check is loaded (discovery), and the slow ones bring the
    measured sections they read; the report, the command line and rich still stay out."""
    modules = imported_modules("healthcheck", "--root", str(fixture_root(ROOT)))
    assert "paddle_doctor.judge.rules" in modules and "yaml" in modules  # no baseline: rules.yaml is read
    assert loaded(modules, REPORT_AND_COMMAND_LINE) == set()
    assert loaded(modules, ("paddle", "click", "rich")) == set()


def test_facts_alone_load_no_measured_section():
    listed = fresh("import sys, paddle_doctor.facts; print(' '.join(sorted(sys.modules)))").split()
    assert loaded(set(listed), MEASURED_SECTIONS) == set()


def test_a_facts_file_with_every_measured_section_reads_back_in_a_fresh_interpreter(tmp_path):
    data = facts_data()  # a verification with one result of each kind
    data["graph"] = json.loads(json.dumps(vars_of(graph_facts(("conv_bn_fuse_pass", "fused")))))
    data["service_record"] = vars_of(ServiceRecord(RecordStatus.NOT_FOUND, "no record of process 7", "/tmp/records/7"))
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(data))
    code = ("import json, sys\nfrom paddle_doctor.facts.loading import load_facts\n"
            f"facts = load_facts({str(path)!r})\n"
            "print(type(facts.verification).__name__, type(facts.graph).__name__, type(facts.service_record).__name__)\n"
            "print(facts.to_json(), end='')\n")
    names, _, written = fresh(code).partition("\n")
    assert names == "VerificationFacts GraphFacts ServiceRecord"
    assert json.loads(written) == data


def test_the_facts_schema_generates_in_a_fresh_interpreter():
    code = ("import json\nfrom paddle_doctor.base.schema import DOCUMENTS\n"
            "(facts,) = [d for d in DOCUMENTS if d.file == 'facts.schema.json']\n"
            "print(json.dumps(sorted(facts.generate()['$defs'])))\n")
    definitions = json.loads(fresh(code))
    assert {"verification_facts", "graph_facts", "service_record", "predictor_config"} <= set(definitions)


def test_recording_switched_on_loads_the_hook_alone_until_paddle_inference_is_imported():
    code = ("import sys\nfrom paddle_doctor.recorder.hook import install\ninstall()\n"
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('paddle_doctor'))))\n")
    assert fresh(code).split() == ["paddle_doctor", "paddle_doctor.recorder", "paddle_doctor.recorder.hook"]


def vars_of(section) -> dict:
    from paddle_doctor.base.serde import to_data

    return to_data(section)


LIST_DATACLASSES_AT_EXIT = (
    "import os, sys\n"
    "def listed():\n"
    "    from paddle_doctor.base import deferred\n"
    "    classes = {value for module in list(sys.modules.values()) if module.__name__.startswith('paddle_doctor')\n"
    "               for value in vars(module).values() if isinstance(value, type) and value.__module__ == module.__name__}\n"
    "    made = [c for c in classes if '__dataclass_fields__' in c.__dict__ and not deferred.is_pending(c)]\n"
    "    pending = [c for c in classes if deferred.is_pending(c)]\n"
    "    for word, group in (('MADE', made), ('PENDING', pending)):\n"
    "        sys.stderr.write(word + ' ' + ' '.join(sorted(f'{c.__module__}.{c.__qualname__}' for c in group)) + '\\n')\n"
    "    sys.stderr.write('MODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    "    sys.stderr.flush()\n"
    "leave = os._exit\n"
    "os._exit = lambda code: (listed(), leave(code))\n"
    "from paddle_doctor.entry import main\n"
    "main(sys.argv[1:])\n"
)
# what the healthcheck made at every probe before it made its types on first use, and imported for nothing
MADE_AT_MOST = 60  # the dataclasses of a healthy healthcheck with a baseline: those whose objects it builds
NEVER_MADE = ("paddle_doctor.checks.trt_cache.CacheEvidence", "paddle_doctor.checks.gpu_visibility.DevicesEvidence",
              "paddle_doctor.facts.SourceSetting", "paddle_doctor.facts.SourceLocation", "paddle_doctor.facts.DeployedProcess",
              "paddle_doctor.facts.GpuDevice", "paddle_doctor.facts.launcher.LauncherFacts", "paddle_doctor.judge.registry.LoadFailure")
NOT_IMPORTED = ("paddle_doctor.base.interpreter", "paddle_doctor.render.output")


def test_a_healthy_healthcheck_makes_only_the_dataclasses_whose_objects_it_builds(tmp_path):
    """Making a dataclass costs about half a millisecond of the probe's CPU: the evidence of checks that
    pass and the facts only other probes fill are deferred (base/deferred.py), and stay unmade."""
    container = Container(tmp_path, ROOT)
    container.record("--threads", "1")
    result = subprocess.run([sys.executable, "-c", LIST_DATACLASSES_AT_EXIT, "healthcheck", "--baseline", str(container.baseline)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("healthy: "), (result.stdout, result.stderr[-2000:])
    lines = {word: set(rest.split()) for word, _, rest in (line.partition(" ") for line in result.stderr.splitlines())}
    assert "paddle_doctor.facts.Facts" in lines["MADE"] and "paddle_doctor.checks.cpu_budget.ThreadsEvidence" in lines["MADE"]
    assert len(lines["MADE"]) <= MADE_AT_MOST, sorted(lines["MADE"])
    assert set(NEVER_MADE) <= lines["PENDING"]
    assert loaded(lines["MODULES"], NOT_IMPORTED) == set()
