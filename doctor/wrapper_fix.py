"""A fix in the terms of the wrapper that built the predictor: a PaddleOCR user does not own the
Config, so the finding's fix names PaddleOCR's own setting first (``PaddleOCR(cpu_threads=2)``), the
YAML key or the variable, and keeps the raw Config call after it as the alternative."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .quoting import quoted
from .rules import Change
from .schema import Count

if TYPE_CHECKING:
    from .facts import Facts
    from .findings import Finding
    from .record.document import Frame, RecordedPredictor
    from .wrappers import Wrapper

PROPOSED_SETTING = {"threads": "threads", "onednn": "onednn"}  # a Proposal's setting -> the wrappers.yaml setting


@dataclass
class WrapperFix:
    """The wrapper whose own setting leads the fix: its id and name, the version the record saw,
    where it built the predictor, and how many of the fix's first changes are its own (the rest
    are the Config calls, the alternative)."""

    wrapper: str
    name: str
    version: str | None
    built_at: str
    changes: Count


def wrapper_changes(wrapper: Wrapper, setting: str, value: object) -> list[Change]:
    """The wrapper's knobs for ``setting``, with ``value`` filled in quoted for each knob's kind."""
    return [Change(knob.kind, knob.code.replace("{value}", quoted(value, knob.kind)))
            for knob in wrapper.settings[setting].knobs]


def builders(facts: Facts, finding: Finding) -> list[RecordedPredictor]:
    """The recorded predictors a finding is about: those its evidence names, else the busiest one
    (whose configuration the checks judge)."""
    record = facts.service_record
    if record is None or not record.read:
        return []
    named = finding.evidence.get("predictors")
    if isinstance(named, list) and named:
        return [predictor for predictor in record.predictors if predictor.id in named]
    main = record.main_predictor()
    return [main] if main is not None else []


def predictor_wrapper(facts: Facts, finding: Finding) -> tuple[Wrapper, Frame] | None:
    """The known wrapper that built every predictor the finding is about, and the frame that says
    so; None when a predictor was built elsewhere or by different wrappers."""
    from .wrappers import load_wrappers

    frames = [predictor.origin.builder for predictor in builders(facts, finding)]
    packaged = [(frame, frame.package) for frame in frames if frame is not None and frame.package]
    if not frames or len(packaged) != len(frames):
        return None
    book = load_wrappers()
    found = {(package, frame.version): book.for_distribution(package, frame.version) for frame, package in packaged}
    known = [wrapper for wrapper in found.values() if wrapper is not None]
    if len(known) != len(found) or len({wrapper.id for wrapper in known}) != 1:
        return None
    return known[0], packaged[0][0]


def in_wrapper_terms(facts: Facts, finding: Finding, text: str, changes: list[Change]) -> tuple[str, list[Change], WrapperFix | None]:
    """The fix's text and changes with the wrapper's setting first, where a known wrapper built the
    predictor and has a setting for what the fix changes; else as they were."""
    proposal = finding.proposal
    setting = PROPOSED_SETTING.get(proposal.setting) if proposal is not None and proposal.values else None
    if proposal is None or setting is None or facts.service_record is None:
        return text, changes, None
    found = predictor_wrapper(facts, finding)
    if found is None or setting not in found[0].settings:
        return text, changes, None
    wrapper, frame = found
    own = wrapper_changes(wrapper, setting, proposal.values[-1])
    knob = wrapper.settings[setting]
    version = f" {frame.version}" if frame.version else ""
    words = [(f"{wrapper.name}{version} builds this predictor ({frame.where()}): change {wrapper.name}'s own setting "
             f"(first below); the Config call after it is the alternative where the service builds its Config itself.")]
    if knob.note:
        words.append(knob.note[0].upper() + knob.note[1:])
    words += [f"Known for {wrapper.name}{version}: {pitfall.text}" for pitfall in wrapper.pitfalls_of(frame.version, setting)]
    return " ".join([*words, text]), own + changes, WrapperFix(wrapper.id, wrapper.name, frame.version or None, frame.where(), len(own))
