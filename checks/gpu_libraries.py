"""cuDNN: does the cuDNN the loader finds match the one the Paddle wheel was built with?"""

from __future__ import annotations

from dataclasses import replace

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.gpu_support import gpu_wheel, host_evidence, uses_gpu, version_tuple, wheel_label
from paddle_doctor.judge.registry import Check

RULE = "PD-GPU-002"


@evidence
class CudnnEvidence(Evidence):
    UNSAID = frozenset({"searched"})  # said where the loader finds no cuDNN at all

    wheel_cudnn: str | None
    cudnn_major: int
    cuda_major: int
    libraries: dict[str, list[str]]
    searched: list[str] | None = None


def check(facts: Facts) -> list[Finding]:
    if gpu_wheel(facts) is not True:
        return [skipped(RULE, f"no GPU build of Paddle: {wheel_label(facts)}")]
    if not uses_gpu(facts):
        return [skipped(RULE, f"the service does not run on a GPU here ({host_evidence(facts)}); see PD-GPU-005")]
    wanted = version_tuple(facts.paddle.cudnn_version)
    cuda = version_tuple(facts.paddle.cuda_version) or (12,)
    if wanted is None:
        return [skipped(RULE, f"the wheel's cuDNN version {facts.paddle.cudnn_version!r} cannot be read")]
    copies = facts.libraries.found.get("libcudnn", [])
    evidence = CudnnEvidence(facts.paddle.cudnn_version, wanted[0], cuda[0],
                             {name: [f"{c.path} ({c.version or 'no version'})" for c in found]
                              for name, found in facts.libraries.found.items()})
    expected = f"libcudnn {wanted[0]}.x first on the loader's path"
    if not copies:
        return [Finding(RULE, Status.FAIL, f"the wheel was built with cuDNN {facts.paddle.cudnn_version} but the loader finds no libcudnn",
                        observed=f"no libcudnn.so* in {len(facts.libraries.searched)} folders searched", expected=expected,
                        evidence=replace(evidence, searched=facts.libraries.searched))]
    first = copies[0]
    found = version_tuple(first.version)
    if found is None:
        return [skipped(RULE, f"{first.path} carries no version in its name; cannot compare it with cuDNN {facts.paddle.cudnn_version}")]
    if found[0] != wanted[0]:
        return [Finding(RULE, Status.FAIL, f"the wheel was built with cuDNN {facts.paddle.cudnn_version} but the loader finds cuDNN {first.version}",
                        observed=f"{first.path}", expected=expected, evidence=evidence)]
    return [passed(RULE, f"cuDNN {first.version} ({first.path}) matches the wheel's cuDNN {facts.paddle.cudnn_version}", evidence)]


CHECK = Check(name="gpu_libraries", rules=(RULE,), run=check, evidence={RULE: CudnnEvidence})
