"""A fix in the terms of the wrapper that built the predictor: a PaddleOCR user does not own the
Config, so the finding's fix names PaddleOCR's own setting first (``PaddleOCR(cpu_threads=2)``), the
YAML key or the variable, and keeps the raw Config call after it as the alternative; the
recommended configuration likewise (:func:`recommended_in_wrapper_terms`)."""

from __future__ import annotations

import ast
import itertools
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base.quoting import quoted
from ..base.schema import Count
from ..base.vocabulary import Precision
from .rules import Change

if TYPE_CHECKING:
    from ..facts import Facts
    from ..facts.predictor import PredictorConfig
    from ..facts.recorded import Frame, RecordedPredictor
    from .findings import Finding
    from .wrappers import Wrapper

PROPOSED_SETTING = {"threads": "threads", "onednn": "onednn"}  # a Proposal's setting -> the wrappers.yaml setting


def wrapper_setting(setting: str, value: object) -> str | None:
    """The wrappers.yaml setting that sets the doctor's ``setting`` to ``value``: bf16 is a precision of its own."""
    return "bf16" if setting == "precision" and value == Precision.BF16 else PROPOSED_SETTING.get(setting)


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
    """The predictors a finding is about: those its evidence names, else the busiest recorded one
    (whose configuration the checks judge); with no record, the predictors the source builds."""
    from ..service.sources import source_predictors

    record = facts.service_record
    named = finding.evidence.get("predictors")
    if record is None or not record.read:
        built = source_predictors(facts.service_source)
        return [predictor for predictor in built if predictor.id in named] if isinstance(named, list) and named else built
    if isinstance(named, list) and named:
        return [predictor for predictor in record.predictors if predictor.id in named]
    main = record.main_predictor()
    return [main] if main is not None else []


def predictor_wrapper(facts: Facts, finding: Finding) -> tuple[Wrapper, Frame] | None:
    """The known wrapper that built every predictor the finding is about, and the frame that says so."""
    return wrapper_of(builders(facts, finding))


def wrapper_of(predictors: list[RecordedPredictor]) -> tuple[Wrapper, Frame] | None:
    """The known wrapper that built every one of ``predictors`` (the distribution of each one's
    builder frame), and the first such frame; None when one was built elsewhere or by different wrappers."""
    from .wrappers import load_wrappers

    frames = [predictor.origin.builder for predictor in predictors]
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
    setting = wrapper_setting(proposal.setting, proposal.values[-1]) if proposal is not None and proposal.values else None
    if proposal is None or setting is None:
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


@dataclass(frozen=True)
class WrapperSnippet:
    """The recommended configuration in the settings of the wrapper that builds the predictors:
    ``words`` says which wrapper and where, ``code`` is what its user writes."""

    words: str
    code: str


def recommended_in_wrapper_terms(config: PredictorConfig, predictors: list[RecordedPredictor]) -> WrapperSnippet | None:
    """The recommended threads, oneDNN and bf16 as the wrapper's own settings (``PaddleOCR(cpu_threads=2,
    enable_mkldnn=True)``, its flag, YAML key or variable); None where no known wrapper built every
    predictor, or it has no setting for them."""
    found = wrapper_of(predictors)
    if found is None:
        return None
    wrapper, frame = found
    changes = wrapper_changes(wrapper, "threads", config.threads) if "threads" in wrapper.settings else []
    if config.onednn and "onednn" in wrapper.settings:
        changes += wrapper_changes(wrapper, "onednn", True)
    if config.precision == Precision.BF16 and "bf16" in wrapper.settings:
        changes += wrapper_changes(wrapper, "bf16", True)
    if not changes:
        return None
    version = f" {frame.version}" if frame.version else ""
    words = (f"{wrapper.name}{version} builds these predictors ({frame.where()}): in its own settings, "
             f"one of these; the Config calls below are the alternative where the service builds its Config itself")
    return WrapperSnippet(words, "\n".join(_merged(changes)) + "\n")


def _merged(changes: list[Change]) -> list[str]:
    """The changes' code, one line per kind: the keyword calls of one function merged into one call
    (nested calls too), the flags of one command into one command; other kinds line by line."""
    lines: list[str] = []
    for kind in dict.fromkeys(change.kind for change in changes):
        codes = list(dict.fromkeys(change.code for change in changes if change.kind == kind))
        merge = _merge_calls if kind == "python" else _merge_commands if kind == "shell" else None
        lines += merge(codes) if merge else codes
    return lines


def _merge_calls(codes: list[str]) -> list[str]:
    calls: list[ast.Call] = []
    for code in codes:
        try:
            node = ast.parse(code, mode="eval").body
        except SyntaxError:
            return codes
        if not isinstance(node, ast.Call):
            return codes
        same = next((call for call in calls if _same_callee(call, node)), None)
        if same is None:
            calls.append(node)
        else:
            _merge_into(same, node)
    return [ast.unparse(call) for call in calls]


def _same_callee(one: ast.Call, other: ast.Call) -> bool:
    return ast.dump(one.func) == ast.dump(other.func) and [ast.dump(a) for a in one.args] == [ast.dump(a) for a in other.args]


def _merge_into(target: ast.Call, extra: ast.Call) -> None:
    for keyword in extra.keywords:
        present = next((k for k in target.keywords if k.arg == keyword.arg and k.arg is not None), None)
        if present is None:
            target.keywords.append(keyword)
        elif isinstance(present.value, ast.Call) and isinstance(keyword.value, ast.Call) and _same_callee(present.value, keyword.value):
            _merge_into(present.value, keyword.value)
        else:
            present.value = keyword.value


def _merge_commands(codes: list[str]) -> list[str]:
    """``paddleocr --enable_mkldnn true --cpu_threads 2`` from the flags of each knob's command."""
    merged: list[list[str]] = []
    for code in codes:
        try:
            words = shlex.split(code)
        except ValueError:
            return codes
        command = next((words_ for words_ in merged if _command(words_) == _command(words)), None)
        if command is None:
            merged.append(words)
            continue
        for flag, value in _flags(words):
            if flag not in command:
                command += [flag] + ([value] if value is not None else [])
    return [shlex.join(words) for words in merged]


def _command(words: list[str]) -> list[str]:
    return list(itertools.takewhile(lambda word: not word.startswith("-"), words))


def _flags(words: list[str]) -> list[tuple[str, str | None]]:
    rest = words[len(_command(words)):]
    found: list[tuple[str, str | None]] = []
    for index, word in enumerate(rest):
        if word.startswith("-"):
            value = rest[index + 1] if index + 1 < len(rest) and not rest[index + 1].startswith("-") else None
            found.append((word, value))
    return found
