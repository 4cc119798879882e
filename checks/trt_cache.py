"""TensorRT engine cache: are engines serialized, into a folder that survives a restart and is writable?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import CacheStatus, Precision
from paddle_doctor.facts import Facts
from paddle_doctor.facts.mounts import lost_on_restart, mount_for
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

REBUILT, NOT_PERSISTED, NOT_WRITABLE = "PD-TRT-001", "PD-TRT-002", "PD-TRT-003"


@evidence
class CacheEvidence(Evidence):
    directory: str | None


@evidence
class EnginesEvidence(Evidence):
    engines: int


@evidence
class MountEvidence(Evidence):
    directory: str
    mountpoint: str
    fstype: str
    source: str


@evidence
class WritableEvidence(Evidence):
    directory: str | None
    checked_path: str | None
    service_user: str


def check(facts: Facts) -> list[Finding]:
    trt, cache = facts.service.tensorrt, facts.trt_cache
    rules = (REBUILT, NOT_PERSISTED, NOT_WRITABLE)
    if not trt.enabled:
        return [skipped(rule, "the service does not enable TensorRT") for rule in rules]
    if cache.status != CacheStatus.PROBED:
        return [skipped(rule, cache.reason or "the cache folder was not probed") for rule in rules]
    if not (trt.use_static or trt.precision == Precision.INT8 or trt.dynamic_shape_file):
        rebuilt = Finding(REBUILT, Status.FAIL, "use_static is off: TensorRT engines are built in memory at every start",
                          observed="enable_tensorrt_engine(use_static=False)", expected="use_static=True",
                          evidence=CacheEvidence(cache.directory))
        return [rebuilt, *(skipped(rule, "engines are not serialized; see PD-TRT-001") for rule in rules[1:])]
    count = len(cache.engines)
    state = f"{count} serialized engine{'s' if count != 1 else ''}" if count else "no engines yet (the first start builds them)"
    return [passed(REBUILT, f"engines are serialized to {cache.directory}: {state}", EnginesEvidence(count)),
            persisted_finding(facts), writable_finding(facts)]


def persisted_finding(facts: Facts) -> Finding:
    directory = facts.trt_cache.directory
    mount = mount_for(facts.mounts, directory) if directory else None
    if directory is None or mount is None:
        return skipped(NOT_PERSISTED, "the mount table (/proc/self/mountinfo) was not read")
    evidence = MountEvidence(directory, mount.mountpoint, mount.fstype, mount.source)
    where = lost_on_restart(mount)
    if where is None:
        return passed(NOT_PERSISTED, f"{directory} is on {mount.fstype} {mount.source} mounted at {mount.mountpoint}", evidence)
    return Finding(NOT_PERSISTED, Status.FAIL, f"the engine cache {directory} is on {where}",
                   observed=f"{mount.fstype} at {mount.mountpoint}", expected="a volume or bind mount", evidence=evidence)


def writable_finding(facts: Facts) -> Finding:
    cache, euid = facts.trt_cache, facts.process.euid
    target = cache.directory if cache.exists else f"{cache.checked_path} (where Paddle would create {cache.directory})"
    checked = cache.checked_path or cache.directory
    mount = mount_for(facts.mounts, checked) if checked else None
    if mount is not None and "ro" in (*mount.options, *mount.super_options):
        return not_writable(facts, f"{target} is on a read-only mount ({mount.mountpoint}, {mount.fstype})", "ro mount")
    if cache.mode is None:
        return skipped(NOT_WRITABLE, f"the mode of {cache.checked_path} could not be read")
    mode = f"mode {cache.mode:04o}, owner {cache.uid}:{cache.gid}"
    if euid == 0:
        return passed(NOT_WRITABLE, f"{target} is writable as root ({mode}); a non-root service user needs write permission there too")
    if euid is None:
        bits, who = cache.mode >> 6, f"its owner (uid {cache.uid})"
    else:
        shift = 6 if euid == cache.uid else 3 if cache.gid in facts.process.groups else 0
        bits, who = cache.mode >> shift, f"uid {euid}"
    if bits & 0o3 == 0o3:
        return passed(NOT_WRITABLE, f"{target} is writable for {who} ({mode})")
    return not_writable(facts, f"{target} is not writable for {who} ({mode})", mode)


def not_writable(facts: Facts, message: str, observed: str) -> Finding:
    cache = facts.trt_cache
    service_user = str(facts.process.euid) if facts.process.euid not in (None, 0) else "app"
    return Finding(NOT_WRITABLE, Status.FAIL, message + ": every start rebuilds the engines and the save fails silently",
                   observed=observed, expected="a writable folder",
                   evidence=WritableEvidence(cache.directory, cache.checked_path, service_user))


CHECK = Check(name="trt_cache", rules=(REBUILT, NOT_PERSISTED, NOT_WRITABLE), run=each_predictor(check),
              evidence={REBUILT: CacheEvidence, NOT_PERSISTED: MountEvidence, NOT_WRITABLE: WritableEvidence})
