"""PD-GRAPH-002/003/005/006/007: fusion coverage, chain breakers, dropout, unreadable programs and
TensorRT coverage, checked on hand-built GraphFacts."""

from dataclasses import replace

import pytest
from factories import by_rule, graph_facts, make_facts, run_check
from paddle_doctor.checks import dropout_left, fusion_breakers, fusion_coverage, tensorrt_coverage
from paddle_doctor.facts import TensorRTSettings
from paddle_doctor.facts.graph import ChainBreaker, TensorRTShare

SIN = ChainBreaker("op", "sin", 11, "%42", "add #10", "batch_norm #12")
SECOND_READER = ChainBreaker("consumer", "add", 13, "%42", "add #10", "batch_norm #11")
CUSTOM = ChainBreaker("op", "my_activation", 11, "%42", "add #10", "batch_norm #12", custom=True)


def with_graph(graph, **service):
    facts = make_facts(**service)
    return replace(facts, service=replace(facts.service, model="/models/m"), graph=graph)


FUSED = ("conv_bn_act", "fused")


@pytest.mark.parametrize(
    "graph, low, unreadable",
    [
        (None, "skip", "skip"),
        (graph_facts(error="/models/m/inference.json: PIR program version 99; this reader knows versions up to 6"), "skip", "fail"),
        (graph_facts(FUSED, FUSED, ("fc", "fused")), "pass", "pass"),
        # 4 of 5 is exactly the 80% threshold
        (graph_facts(FUSED, FUSED, FUSED, ("conv_bn_act", "partial"), ("fc", "fused")), "pass", "pass"),
        (graph_facts(FUSED, ("conv_bn_act", "unfused"), ("attention", "partial")), "fail", "pass"),
        # unknown instances are not counted: 1 of 1 counted
        (graph_facts(FUSED, ("fc", "unknown")), "pass", "pass"),
        (graph_facts(("fc", "unknown"), optimised_status="skipped", reason="the service runs on GPU"), "skip", "pass"),
        (graph_facts(FUSED, optimised_status="error", reason="Paddle cannot build it: SIGSEGV"), "error", "pass"),
        (graph_facts(), "pass", "pass"),
    ],
)
def test_coverage_and_unreadable_program(graph, low, unreadable):
    found = by_rule(run_check(fusion_coverage.CHECK, with_graph(graph)))
    assert (found["PD-GRAPH-003"].status.value, found["PD-GRAPH-006"].status.value) == (low, unreadable)


def test_low_coverage_names_each_pattern_and_the_common_reason():
    graph = graph_facts(FUSED, ("fc", "unfused"), ("fc", "unfused"))
    unfused_because = "no pass that fuses fc ran in this configuration (PIR program, CPU without oneDNN)"
    graph = replace(graph, instances=[graph.instances[0], *(replace(i, reason=unfused_because) for i in graph.instances[1:])])
    found = by_rule(fusion_coverage.check(with_graph(graph)))["PD-GRAPH-003"]
    assert found.message.startswith("1 of 3 fusible instances fused (33%) in the ")
    assert "2 x no pass that fuses fc ran" in found.message
    assert found.observed == "conv2d + batch_norm (+ activation): 1/1; matmul + bias add (+ activation) as fc: 0/2"
    assert found.evidence["coverage"] == 0.3333 and found.evidence["threshold"] == 0.8 and found.evidence["model"] == "/models/m"


def test_unreadable_program_is_named_with_its_version():
    error = "/models/m/inference.json: PIR program version 99; this reader knows versions up to 6"
    found = by_rule(fusion_coverage.check(with_graph(graph_facts(error=error))))["PD-GRAPH-006"]
    assert found.message == error and found.evidence["program"] == "/models/m/inference.json"


@pytest.mark.parametrize(
    "graph, status",
    [
        (None, "skip"),
        (graph_facts(error="x: not a Paddle PIR program"), "skip"),
        (graph_facts(FUSED, ("fc", "unfused")), "pass"),
        (graph_facts(FUSED, ("conv_bn_act", "partial", [SIN])), "fail"),
        (graph_facts(("conv_bn_act", "unfused", [SECOND_READER])), "fail"),
        # Paddle fused it anyway: not a problem
        (graph_facts(("conv_bn_act", "fused", [SECOND_READER])), "pass"),
        # no optimised program: the breaker is there, the outcome cannot be told
        (graph_facts(("conv_bn_act", "unknown", [CUSTOM]), optimised_status="skipped"), "warn"),
    ],
)
def test_breakers(graph, status):
    (finding,) = run_check(fusion_breakers.CHECK, with_graph(graph))
    assert finding.status.value == status


def test_breaker_is_named_at_its_position_with_the_chain():
    (finding,) = fusion_breakers.check(with_graph(graph_facts(FUSED, ("conv_bn_act", "partial", [SIN]))))
    assert finding.evidence["breaker"] == "op sin #11 between add #10 and batch_norm #12"
    assert finding.evidence["chain"] == "conv2d #4 -> batch_norm #5"
    assert finding.evidence["breakers"][0]["position"] == 11
    (custom,) = fusion_breakers.check(with_graph(graph_facts(("conv_bn_act", "unfused", [CUSTOM]))))
    assert custom.evidence["breaker"].startswith("custom op my_activation #11")
    (reader,) = fusion_breakers.check(with_graph(graph_facts(("conv_bn_act", "unfused", [SECOND_READER]))))
    assert reader.evidence["breaker"] == "add #13 also reading %42 (output of add #10)"


@pytest.mark.parametrize(
    "graph, status",
    [
        (None, "skip"),
        (graph_facts(FUSED), "pass"),
        (graph_facts(dropout=16, dropout_left=16), "fail"),
        (graph_facts(dropout=16, dropout_left=0), "pass"),
        (graph_facts(dropout=3, dropout_left=None, optimised_status="skipped", reason="no CUDA"), "skip"),
    ],
)
def test_dropout_left(graph, status):
    (finding,) = run_check(dropout_left.CHECK, with_graph(graph))
    assert finding.status.value == status


def test_dropout_left_counts():
    (finding,) = dropout_left.check(with_graph(graph_facts(dropout=16, dropout_left=12)))
    assert finding.message == "12 of 16 dropout ops are left in the program the predictor runs"
    assert finding.observed == "dropout ops in the program: dropout #0, dropout #1, dropout #2, dropout #3 and 12 more"


TRT = TensorRTSettings(enabled=True, precision="fp16")


@pytest.mark.parametrize(
    "facts, status",
    [
        (with_graph(graph_facts(FUSED)), "skip"),  # CPU
        (with_graph(None, device="gpu", tensorrt=TRT), "skip"),
        (with_graph(graph_facts(FUSED, optimised_status="skipped", reason="no CUDA here"), device="gpu", tensorrt=TRT), "skip"),
        (with_graph(graph_facts(FUSED, tensorrt=TensorRTShare(2, 10, 10, 0.5, {"my_op": 6, "softmax": 4})),
                    device="gpu", tensorrt=TRT), "fail"),
        (with_graph(graph_facts(FUSED, tensorrt=TensorRTShare(1, 19, 1, 0.95, {"my_op": 1})), device="gpu", tensorrt=TRT), "pass"),
    ],
)
def test_tensorrt_coverage(facts, status):
    (finding,) = run_check(tensorrt_coverage.CHECK, facts)
    assert finding.status.value == status


def test_tensorrt_coverage_names_the_ops_left_outside():
    share = TensorRTShare(2, 10, 10, 0.5, {"my_op": 6, "softmax": 4})
    (finding,) = tensorrt_coverage.check(with_graph(graph_facts(FUSED, tensorrt=share), device="gpu", tensorrt=TRT))
    assert finding.message == "10 of 20 ops run inside 2 TensorRT engines (50%); outside: my_op x6, softmax x4"
    assert finding.evidence["outside_ops"] == {"my_op": 6, "softmax": 4}
