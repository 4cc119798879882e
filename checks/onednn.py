"""oneDNN: is the oneDNN CPU backend on for this service?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import PaddleStatus
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, Proposal, Status, passed, skipped
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

RULE = "PD-CPU-004"
TURN_ON = Proposal("onednn", (True,))


def check(facts: Facts) -> list[Finding]:
    paddle, service = facts.paddle, facts.service
    if service.onednn is False:
        return [Finding(RULE, Status.FAIL, "the service turns oneDNN off (disable_mkldnn)",
                        observed=f"oneDNN disabled in the service's Config ({facts.said_by('onednn') or 'as the service says'})", expected="config.enable_mkldnn()",
                        proposal=TURN_ON, locations=facts.lines_deciding("onednn"))]
    if paddle.status != PaddleStatus.OK:
        if service.onednn:
            return [passed(RULE, "the service enables oneDNN")]
        return [skipped(RULE, "Paddle could not be probed, and the service's oneDNN setting is not given (--onednn/--no-onednn)")]
    build = f"{paddle.distribution} {paddle.version}"
    if paddle.compiled_with_mkldnn is False:
        return [Finding(RULE, Status.FAIL, f"{build} was built without oneDNN",
                        observed="is_compiled_with_mkldnn() is False", expected="a Paddle build with oneDNN (the PyPI wheels have it)")]
    if service.onednn:
        return [passed(RULE, f"the service enables oneDNN and {build} has it")]
    if paddle.mkldnn_default_on is False:
        if "avx2" not in facts.cpu.flags and facts.cpu.arch == "x86_64":
            return [skipped(RULE, "Paddle keeps oneDNN off because the CPU lacks AVX2; see PD-CPU-002/PD-CPU-003")]
        return [Finding(RULE, Status.FAIL, f"{build} keeps oneDNN off by default and the service does not enable it",
                        observed="Config().mkldnn_enabled() is False", expected="oneDNN on (config.enable_mkldnn())",
                        proposal=TURN_ON)]
    return [passed(RULE, f"oneDNN is on by default in {build}")]


CHECK = Check(name="onednn", rules=(RULE,), run=each_predictor(check))
