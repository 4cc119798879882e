"""``paddle-doctor fix``: the checks run on the facts, the plan of changes taken from their findings and the
recommendation, each change placed at its setting's origin, shown as one unified diff and, with ``--write``,
written all or none."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..base.vocabulary import FixSafety
from ..facts import Facts
from ..judge.policy import Policy
from ..judge.rules import Rulebook
from .files import Patch, ReadFile, patched_text, read_file, unified_diff
from .places import Placed, Targets, place_all
from .plan import Passed, Wanted, plan_fixes


@dataclass(frozen=True)
class FixOptions:
    """What the user asked of the fix: the unsafe fixes too, the rules chosen (``--select``/``--ignore``,
    ids or prefixes), and the files named besides the source."""

    unsafe: bool = False
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    targets: Targets = field(default_factory=Targets)


@dataclass(frozen=True)
class FixResult:
    """The plan placed: each change with its edits or why it has none, the unsafe ones left out, the fixes the
    measurements passed over, and the patched files."""

    placed: list[Placed]
    hidden: list[Wanted]
    passed: list[Passed]
    patches: list[Patch]
    files: dict[str, ReadFile]
    left_out: int = 0  # changes --select / --ignore left out

    @property
    def applied(self) -> list[Placed]:
        return [one for one in self.placed if one.edits]

    @property
    def refused(self) -> list[Placed]:
        return [one for one in self.placed if one.refused]

    def diff(self, cwd: str) -> str:
        return unified_diff(self.patches, cwd)


def chosen(rules: tuple[str, ...], options: FixOptions) -> bool:
    """Whether ``--select`` (none: every rule) keeps one of the rules asking for a change, and ``--ignore`` none:
    an id or its prefix (``PD-CPU``)."""
    def named(rule_id: str, prefixes: tuple[str, ...]) -> bool:
        return any(prefix and rule_id.upper().startswith(prefix.upper()) for prefix in prefixes)

    kept = [rule_id for rule_id in rules if not named(rule_id, options.ignore)]
    return bool(kept) and (not options.select or any(named(rule_id, options.select) for rule_id in kept))


def fix(facts: Facts, rulebook: Rulebook, settings: Policy, options: FixOptions, project: list[str]) -> FixResult:
    """Raises FixRefused where two changes edit one place differently or a file cannot be read safely.
    ``project``: the folders the fix may edit in (what the user named, and the service's script's)."""
    from ..judge.registry import discover_checks
    from ..judge.runner import run_checks
    from ..judge.weighing import judge

    checks, _ = discover_checks(rulebook)
    judged = judge(run_checks(checks, facts, rulebook), rulebook, settings)[0]
    plan = plan_fixes(facts, judged, rulebook)
    kept = [wanted for wanted in plan.wanted if chosen(wanted.rules, options)]
    hidden = [wanted for wanted in kept if wanted.safety == FixSafety.UNSAFE and not options.unsafe]
    files: dict[str, ReadFile] = {}

    def read(path: str) -> str:
        key = os.path.abspath(path)
        if key not in files:
            files[key] = read_file(key, project)
        return files[key].text

    placed = place_all(facts, [wanted for wanted in kept if wanted not in hidden], options.targets, read)
    by_file: dict[str, list] = {}
    for one in placed:
        for path, edit in one.edits:
            by_file.setdefault(os.path.abspath(path), []).append(edit)
    patches = [Patch(files[path], tuple(edits)) for path, edits in by_file.items()]
    for patch in patches:
        patched_text(patch.read, patch.edits)  # a conflict between two changes refuses the whole fix here
    return FixResult(placed, hidden, plan.passed, patches, files, len(plan.wanted) - len(kept))
