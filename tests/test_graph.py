"""Fusion coverage on real programs: the fixture models built by the test suite, optimised by the
installed Paddle for the service's configuration; plus hand-written programs for what cannot run
here (TensorRT engines) and for the reader's corners (nested blocks, custom ops)."""

import json
import re
import sys
import tempfile
from pathlib import Path

import jsonschema
import pytest
from conftest import fixture_root, report_json, run_doctor
from factories import make_facts, paddle_ok
from paddle_doctor.base.serde import from_data, to_data
from paddle_doctor.base.vocabulary import ModelFormat
from paddle_doctor.facts import TensorRTSettings
from paddle_doctor.facts.graph import GraphFacts, OptimisedProgram
from paddle_doctor.graph.coverage import IR_OFF, analyse, tensorrt_share
from paddle_doctor.graph.dataflow import Flow
from paddle_doctor.graph.program import Op, Program, Var, read_program
from paddle_doctor.verify.graph_probe import probe_graph, unreadable_program
from paddle_doctor.verify.model import ModelRun
from paddle_doctor.verify.run import VerifyOptions, run_verification


def probe(model_dir, **service):
    facts = make_facts(paddle=paddle_ok(python=sys.executable), **service)
    with ModelRun(model_dir) as run:
        return probe_graph(facts, run)


def by_pattern(graph):
    return {c.pattern: (c.fused, c.partial, c.unfused, c.fusible) for c in graph.coverage}


def leftover_optim_dirs():
    return sorted(Path(tempfile.gettempdir()).glob("paddle-doctor-optim-*"))


@pytest.fixture(scope="module")
def cnn_onednn(models):
    before = leftover_optim_dirs()
    graph = probe(models["cnn-pir"], onednn=True)
    assert leftover_optim_dirs() == before, "the optimised program's temporary directory was left behind"
    return graph


def test_cnn_with_onednn_is_fully_fused(cnn_onednn):
    graph = cnn_onednn
    assert by_pattern(graph) == {"conv_bn_act": (4, 0, 0, 4), "fc": (1, 0, 0, 1)}
    assert (graph.total.fused, graph.total.fusible, graph.total.coverage) == (5, 5, 1.0)
    first = graph.instances[0]
    assert first.ops == ["conv2d #1", "add #4", "batch_norm #5", "relu #6"]
    assert first.params == ["conv2d_0.w_0"] and first.became == ["fused_conv2d"] and first.reason is None
    assert graph.instances[-1].became == ["fc"]
    optimised = graph.optimised
    assert optimised.status == "read" and optimised.pipeline == "PIR program, CPU with oneDNN"
    assert "conv2d_bn_onednn_fuse_pass" in optimised.passes
    assert optimised.removed["conv2d"] == 4 and optimised.removed["batch_norm"] == 4 and optimised.removed["relu"] == 4
    assert optimised.added == {"fused_conv2d": 4, "fc": 1}
    assert (graph.ops, graph.histogram["conv2d"], graph.feed_fetch) == (31, 4, {"data": 1, "fetch": 1})


def test_pir_on_cpu_without_onednn_runs_no_fusion_pass(models):
    graph = probe(models["cnn-pir"], onednn=False)
    assert by_pattern(graph) == {"conv_bn_act": (0, 0, 4, 4), "fc": (0, 0, 1, 1)}
    assert graph.total.coverage == 0.0
    assert graph.instances[0].reason == ("no pass that fuses conv2d + batch_norm (+ activation) ran in this configuration "
                                         "(PIR program, CPU without oneDNN)")


def test_a_custom_op_between_conv_and_batch_norm_is_named_at_its_position(models):
    graph = probe(models["cnn_custom_op-pir"], onednn=True)
    assert by_pattern(graph) == {"conv_bn_act": (3, 1, 0, 4), "fc": (1, 0, 0, 1)}
    assert (graph.total.fused, graph.total.coverage) == (4, 0.8)
    broken = graph.instances[1]
    assert broken.status == "partial" and broken.ops == ["conv2d #7", "add #10", "batch_norm #12", "relu #13"]
    (breaker,) = broken.breakers
    assert (breaker.kind, breaker.op, breaker.position, breaker.after, breaker.before) == ("op", "sin", 11, "add #10", "batch_norm #12")
    assert broken.became == ["fused_conv2d", "batch_norm"]
    assert broken.reason == ("partly fused (conv2d + add -> fused_conv2d, batch_norm + relu -> batch_norm): "
                             "op sin #11 sits between add #10 and batch_norm #12; no pass fuses across it")


def test_an_extra_consumer_of_the_conv_output_is_named(models):
    graph = probe(models["cnn_extra_consumer-pir"], onednn=True)
    assert by_pattern(graph)["conv_bn_act"] == (3, 1, 0, 4)
    broken = graph.instances[1]
    (breaker,) = broken.breakers
    assert (breaker.kind, breaker.op, breaker.position) == ("consumer", "add", 13)
    assert breaker.variable == broken.variables[1]  # the bias add's output, read by the residual add
    assert f"the output of add #10 ({breaker.variable}) is also used by add #13, outside the pattern" in broken.reason


def test_encoder_attention_and_fc_patterns(models):
    graph = probe(models["encoder-pir"], onednn=True)
    assert by_pattern(graph) == {"fc": (26, 0, 0, 26), "embedding_layer_norm": (0, 0, 1, 1), "attention": (0, 4, 0, 4),
                                 "add_layer_norm": (0, 0, 8, 8)}
    assert (graph.total.fused, graph.total.fusible, graph.total.coverage) == (26, 39, 0.6667)
    attention = next(i for i in graph.instances if i.pattern == "attention")
    assert attention.ops == ["scale #30", "matmul #31", "softmax #32", "dropout #34", "matmul #35"]
    assert attention.became == ["fused_matmul", "softmax", "dropout", "fused_matmul"]
    # whether Paddle runs its oneDNN attention pass here depends on the CPU it runs on; the reason follows what ran
    if "self_attention_fuse_pass" in graph.optimised.passes:
        assert attention.reason.startswith("partly fused (scale + matmul -> fused_matmul): self_attention_fuse_pass ran but did not fuse it")
    else:
        assert attention.reason.startswith("partly fused (scale + matmul -> fused_matmul): no pass that fuses attention")
    gelu = next(i for i in graph.instances if i.ops[-1].startswith("gelu"))
    assert gelu.pattern == "fc" and gelu.status == "fused" and gelu.became == ["fc"]
    assert (len(graph.dropout), graph.dropout_left) == (16, 16)


def test_pdmodel_and_pir_have_the_same_fusible_instances(models, cnn_onednn):
    protobuf = probe(models["cnn-pdmodel"], onednn=True)
    def shape(graph):
        return [(i.pattern, len(i.ops), i.params) for i in graph.instances]

    assert shape(protobuf) == shape(cnn_onednn)
    # Paddle 3.3.1's old IR refuses conv + bias + batch_norm from this export: its bias add has axis -1
    assert by_pattern(protobuf) == {"conv_bn_act": (0, 4, 0, 4), "fc": (1, 0, 0, 1)}
    assert protobuf.optimised.pipeline == "old-IR program, CPU with oneDNN"
    assert protobuf.instances[0].reason == ("partly fused (batch_norm + relu -> batch_norm): conv_eltwiseadd_bn_fuse_pass "
                                            "rejected it: the Attr(axis) of elementwise_add failed the pass's compatibility check")


def test_graph_coverage_and_verification_share_one_worker(models):
    """One run, one worker: the graph is built in it (the passes' refusals still logged), then the
    service's configuration is measured in it; closing the run ends it."""
    facts = make_facts(flags=["avx", "avx2"], online=2, paddle=paddle_ok(python=sys.executable), threads=1, onednn=True)
    with ModelRun(models["cnn-pdmodel"]) as run:
        graph = probe_graph(facts, run)
        assert run.workers_started == 1 and graph.optimised.status == "read"
        assert any(r.pass_name == "conv_eltwiseadd_bn_fuse_pass" for r in graph.optimised.rejections)
        shared = run.shared
        verification = run_verification(facts, run, VerifyOptions(budget_s=3))
        assert verification.error is None and verification.load_failure is None
        assert verification.experiment("onednn").status == "measured"
        assert run.workers_started == 1 and run.shared is shared and shared.proc.poll() is None
    assert shared.proc.poll() is not None


def test_the_command_line_builds_the_graph_before_it_measures(models):
    """``--model`` from the command line: the graph is built in the shared worker while Paddle's
    log is still on (its refusals are named), then the same model is measured."""
    recorded = run_doctor("facts", "--model", str(models["cnn-pdmodel"]), "--onednn", "--threads", "1", "--budget", "3",
                          timeout=300)
    assert recorded.returncode == 0, recorded.stderr
    facts = json.loads(recorded.stdout)
    assert any(r["pass_name"] == "conv_eltwiseadd_bn_fuse_pass" for r in facts["graph"]["optimised"]["rejections"])
    assert facts["verification"]["error"] is None and facts["verification"]["baseline"]["threads"] == 1
    assert facts["verification"]["model"]["program"] == facts["graph"]["program"]


def test_both_formats_give_the_same_coverage_with_ir_optimisation_off(models):
    graphs = [probe(models[name], ir_optim=False) for name in ("cnn-pir", "cnn-pdmodel")]
    assert [by_pattern(g) for g in graphs] == [{"conv_bn_act": (0, 0, 4, 4), "fc": (0, 0, 1, 1)}] * 2
    assert {i.reason for g in graphs for i in g.instances} == {IR_OFF}
    assert graphs[0].optimised.status == "skipped" and graphs[0].optimised.reason.startswith(IR_OFF)


def test_a_pass_deleted_by_the_service_is_the_reason(models):
    deleted = ["conv2d_bn_onednn_fuse_pass", "conv2d_bias_bn_onednn_fuse_pass"]
    graph = probe(models["cnn-pir"], onednn=True, delete_passes=deleted)
    assert by_pattern(graph)["conv_bn_act"] == (0, 4, 0, 4)
    assert graph.instances[0].reason.endswith("the service deletes conv2d_bn_onednn_fuse_pass, "
                                              "conv2d_bias_bn_onednn_fuse_pass (config.delete_pass)")
    assert "delete_pass('conv2d_bn_onednn_fuse_pass')" in graph.optimised.config


def test_gpu_service_is_skipped_here_with_the_reason(models):
    graph = probe(models["cnn-pir"], device="gpu", tensorrt=TensorRTSettings(enabled=True))
    assert graph.optimised.status == "skipped" and "has no CUDA" in graph.optimised.reason
    assert graph.total.fusible == 5 and graph.total.coverage is None  # found, but what Paddle does cannot be told
    assert {i.status for i in graph.instances} == {"unknown"}


def test_a_program_paddle_cannot_load_is_an_error_naming_file_and_version(models, tmp_path):
    document = json.loads((models["cnn-pir"] / "inference.json").read_text())
    ops = document["program"]["regions"][0]["blocks"][0]["ops"]
    next(op for op in ops if op["#"] == "1.relu")["#"] = "1.relu_from_a_newer_paddle"
    (tmp_path / "inference.json").write_text(json.dumps(document))
    (tmp_path / "inference.pdiparams").write_bytes((models["cnn-pir"] / "inference.pdiparams").read_bytes())
    graph = probe(tmp_path, onednn=True)
    assert graph.optimised.status == "error"
    assert graph.optimised.reason.startswith(f"Paddle cannot build the optimised program of {tmp_path / 'inference.json'} (pir version 4)")
    assert graph.total.fusible == 5 and graph.total.coverage is None


@pytest.mark.parametrize(
    "content, message",
    [(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "not a Paddle ProgramDesc"),
     (b"version https://git-lfs.github.com/spec/v1\n", "not a Paddle ProgramDesc")],
)
def test_unreadable_programs_are_facts_not_exceptions(tmp_path, content, message):
    (tmp_path / "inference.pdmodel").write_bytes(content)
    (tmp_path / "inference.pdiparams").write_bytes(b"x")
    graph = unreadable_program(ModelRun(tmp_path))
    assert graph.program == str(tmp_path / "inference.pdmodel") and message in graph.error


def test_unknown_pir_version_is_named():
    path = Path(tempfile.mkdtemp()) / "inference.json"
    path.write_text(json.dumps({"base_code": {"magic": "pir", "version": 99}, "program": {"regions": [{"blocks": []}]}}))
    path.with_suffix(".pdiparams").write_bytes(b"x")
    assert "PIR program version 99" in unreadable_program(ModelRun(path.parent)).error


# ------------------------------------------------------------------ hand-written programs


def op(kind, inputs, outputs, index, block=0, sub_blocks=(), dialect=None):
    return Op(kind, {"X": list(inputs)}, {"Out": list(outputs)}, index=index, block=block, sub_blocks=list(sub_blocks),
              dialect=dialect)


PARAMS = {name: Var(name, [8], "float32", persistable=True) for name in ("w", "scale", "bias", "mean", "var")}
BN_INPUTS = ("c", "scale", "bias", "mean", "var")


def cnn_program(*middle):
    ops = [op("feed", ["feed"], ["x"], 0), op("conv2d", ["x", "w"], ["c"], 1), *middle]
    tail = len(ops)
    ops += [op("batch_norm", ["m" if middle else "c", *BN_INPUTS[1:]], ["n"], tail), op("relu", ["n"], ["r"], tail + 1),
            op("my_op", ["r"], ["y"], tail + 2), op("softmax", ["y"], ["z"], tail + 3), op("fetch", ["z"], ["out"], tail + 4)]
    return Program(ModelFormat.LEGACY, "model/__model__", ops, dict(PARAMS))


def test_tensorrt_share_is_counted_from_the_engines_subgraphs():
    engine = op("tensorrt_engine", ["x", "w", *BN_INPUTS[1:]], ["r"], 1, sub_blocks=[1])
    optimised = Program(ModelFormat.PDMODEL, "opt/_optimized.pdmodel", [
        op("feed", ["feed"], ["x"], 0), engine, op("my_op", ["r"], ["y"], 2), op("softmax", ["y"], ["z"], 3),
        op("fetch", ["z"], ["out"], 4), op("conv2d", ["x", "w"], ["c"], 5, block=1),
        op("batch_norm", BN_INPUTS, ["n"], 6, block=1), op("relu", ["n"], ["r"], 7, block=1)], dict(PARAMS))
    share = tensorrt_share(Flow(optimised), enabled=True)
    assert (share.engines, share.ops_inside, share.ops_outside, share.share) == (1, 3, 2, 0.6)
    assert share.outside == {"my_op": 1, "softmax": 1}
    graph = analyse(cnn_program(), OptimisedProgram("read", pipeline="old-IR program, GPU with TensorRT (fp16)"), optimised,
                    tensorrt=True)
    (instance,) = graph.instances
    assert (instance.pattern, instance.status, instance.became) == ("conv_bn_act", "fused", ["tensorrt_engine"])
    assert graph.optimised.tensorrt == share


def test_tensorrt_on_without_engines_counts_every_op_outside():
    share = tensorrt_share(Flow(cnn_program()), enabled=True)
    assert (share.engines, share.ops_inside, share.ops_outside, share.share) == (0, 0, 5, 0.0)
    assert tensorrt_share(Flow(cnn_program()), enabled=False) is None


def test_custom_op_breaker_and_ir_optimisation_off():
    program = cnn_program(op("my_act", ["c"], ["m"], 2, dialect="custom_op"))
    graph = analyse(program, OptimisedProgram("skipped", reason="off"), None, ir_optim=False)
    (instance,) = graph.instances
    assert instance.ops == ["conv2d #1", "batch_norm #3", "relu #4"] and instance.status == "unfused"
    assert instance.reason == IR_OFF
    (breaker,) = instance.breakers
    assert (breaker.op, breaker.position, breaker.custom) == ("my_act", 2, True)


def test_a_shape_changing_op_between_conv_and_batch_norm_is_not_a_breaker():
    program = cnn_program(op("pool2d", ["c"], ["m"], 2))
    program.vars.update(c=Var("c", [1, 8, 32, 32]), m=Var("m", [1, 8, 16, 16]))
    assert find_patterns_of(program) == []


def find_patterns_of(program):
    from paddle_doctor.graph.fusions import find_patterns

    return [(m.pattern, [o.type for o in m.ops]) for m in find_patterns(Flow(program))]


def test_nested_pir_blocks_are_read_with_positions_and_dialects(tmp_path):
    tensor = {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW", [], 0]}
    inner = [{"#": "1.matmul", "A": [], "I": [{"%": 2}, {"%": 1}], "O": [{"%": 4, "TT": tensor}]},
             {"#": "2.yield", "A": [], "I": [{"%": 4}], "O": []}]
    ops = [{"#": "p", "A": [0, 1, 1, "w"], "O": {"%": 1, "TT": tensor}},
           {"#": "1.data", "A": [{"N": "name", "AT": {"#": "0.a_str", "D": "x"}}], "I": [], "O": [{"%": 2, "TT": tensor}]},
           {"#": "1.if", "A": [], "I": [{"%": 2}], "O": [{"%": 3, "TT": tensor}],
            "regions": [{"#": "region_1", "blocks": [{"#": "block_1", "args": [], "ops": inner}]}]},
           {"#": "custom_op.my_op", "A": [], "I": [{"%": 3}], "O": [{"%": 5, "TT": tensor}]},
           {"#": "1.fetch", "A": [], "I": [{"%": 5}], "O": [{"%": 6, "TT": tensor}]}]
    path = tmp_path / "inference.json"
    path.write_text(json.dumps({"base_code": {"magic": "pir", "version": 4},
                                "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [], "ops": ops}]}]}}))
    program = read_program(path)
    assert [(o.type, o.index, o.block) for o in program.ops] == [
        ("data", 0, 0), ("if", 1, 0), ("matmul", 2, 1), ("yield", 3, 1), ("my_op", 4, 0), ("fetch", 5, 0)]
    assert program.ops[1].sub_blocks == [1] and program.ops[4].dialect == "custom_op"
    assert program.ops[2].input_names() == ["x", "w"]
    assert [o.type for o in program.consumers("x")] == ["if", "matmul"]
    assert program.histogram()["data"] == 1


def test_a_protobuf_program_is_named_by_its_model_format_and_its_graph_facts_load_again(tmp_path):
    one_empty_block_version_1 = b"\x0a\x00" + b"\x22\x02\x08\x01"
    for name, fmt in (("inference.pdmodel", ModelFormat.PDMODEL), ("__model__", ModelFormat.LEGACY)):
        (tmp_path / name).write_bytes(one_empty_block_version_1)
        program = read_program(tmp_path / name)
        assert (program.format, program.version) == (fmt, 1)
        graph = analyse(program, OptimisedProgram("skipped", reason="off"), None, ir_optim=False)
        assert graph.format == fmt
        assert from_data(GraphFacts, json.loads(json.dumps(to_data(graph)))) == graph


def test_protobuf_programs_carry_their_version(models):
    assert read_program(models["cnn-pdmodel"] / "inference.pdmodel").version == 3003001


# ------------------------------------------------------------------ the CLI, end to end


def test_recorded_facts_replay_the_coverage_findings(models, tmp_path, report_schema):
    snapshot = tmp_path / "facts.json"
    recorded = run_doctor("facts", "--model", str(models["cnn_custom_op-pir"]), "--onednn", "--budget", "3",
                          "-o", str(snapshot), timeout=300)
    assert recorded.returncode == 0, recorded.stderr
    first = report_json(run_doctor("--json", "--facts", str(snapshot)))
    second = report_json(run_doctor("--json", "--facts", str(snapshot)))
    jsonschema.validate(first, report_schema)
    assert first["findings"] == second["findings"] and first["graph"] == second["graph"]
    found = {f["rule_id"]: f for f in first["findings"]}
    assert found["PD-GRAPH-002"]["status"] == "fail"
    assert found["PD-GRAPH-002"]["fix"]["changes"][0]["code"].startswith(
        "op sin #11 between add #10 and batch_norm #12 breaks conv_bn_act (conv2d #7 -> add #10 -> batch_norm #12 -> relu #13)")
    assert found["PD-GRAPH-002"]["verification"]["name"] == "ir_optim"
    assert found["PD-GRAPH-003"]["status"] == "pass" and found["PD-GRAPH-003"]["evidence"]["coverage"] == 0.8
    assert first["graph"]["total"]["fused"] == 4 and first["graph"]["ir_optim_experiment"]["name"] == "ir_optim"
    text = run_doctor("--facts", str(snapshot), "-v", env={"COLUMNS": "200"}).stdout  # the full table is in the verbose report
    assert "Graph fusion coverage" in text
    assert re.search(r"conv2d \+ batch_norm \(\+ activation\)\s+4\s+3\s+1\s+0\s+75%", text)
    assert re.search(r"all patterns\s+5\s+4\s+1\s+0\s+80%", text)
    assert "op sin #11 sits between add #10 and batch_norm #12" in " ".join(text.split())


def write_unreadable_model(folder) -> None:
    (folder / "inference.pdmodel").write_bytes(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
    (folder / "inference.pdiparams").write_bytes(b"x")


def test_an_unreadable_program_is_a_finding_on_a_recorded_container_without_paddle(tmp_path):
    """The program is read without Paddle: the finding in the fast tier (the live one, with Paddle, below)."""
    write_unreadable_model(tmp_path)
    result = run_doctor("--json", "--model", str(tmp_path), "--no-paddle", "--no-gpu",
                        "--root", str(fixture_root("intel-noavx2-v1-quota")))
    found = {f["rule_id"]: f for f in report_json(result)["findings"]}
    assert found["PD-GRAPH-006"]["status"] == "fail"
    assert found["PD-GRAPH-006"]["message"].startswith(f"{tmp_path / 'inference.pdmodel'}: not a Paddle ProgramDesc")
    assert result.returncode == 1 and "Traceback" not in result.stderr


@pytest.mark.slow  # imports Paddle
def test_an_unreadable_program_is_a_finding_and_the_rest_of_the_report_comes_out(tmp_path, report_schema):
    write_unreadable_model(tmp_path)
    result = run_doctor("--json", "--model", str(tmp_path))
    report = report_json(result)
    jsonschema.validate(report, report_schema)
    found = {f["rule_id"]: f for f in report["findings"]}
    assert found["PD-GRAPH-006"]["status"] == "fail" and "inference.pdmodel" in found["PD-GRAPH-006"]["message"]
    assert found["PD-CPU-010"]["status"] in ("pass", "fail")  # the rest of the report
    assert report["verification"] is None and result.returncode == 1
