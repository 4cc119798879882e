"""Source: did the doctor read all of the service's source it was given?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import SourceStop
from paddle_doctor.facts import CANNOT_READ, Facts
from paddle_doctor.judge.findings import Finding, Status, passed
from paddle_doctor.judge.registry import Check, Need

RULE = "PD-SRC-008"


def check(facts: Facts) -> list[Finding]:
    source = facts.service_source
    unread = source.unread
    if not unread and not source.left_out and not source.stopped:
        return [passed(RULE, f"every Python file given was read ({len(source.files)})")]
    parts = []
    if source.stopped == SourceStop.FILES:
        parts.append(f"the read stopped at {len(source.files):,} Python files, the most the doctor reads in one run: "
                     "more were found, and the folders were not searched further")
    elif source.stopped == SourceStop.TIME:
        parts.append(f"the time the doctor gives the source ran out, {len(source.files):,} Python files in: "
                     "what was not read or searched by then is not judged")
    if source.left_out:  # the files read are the first ones found, as many as the doctor reads
        parts.append(f"{source.left_out:,} of {len(source.files) + source.left_out:,} Python files were not read "
                     f"(the doctor reads at most {len(source.files):,} in one run)")
    if unread:
        first = f"{unread[0].location}: {unread[0].message.removeprefix(CANNOT_READ)}"
        parts.append(f"{len(unread)} file{'s' if len(unread) > 1 else ''} not read ({first}{', ...' if len(unread) > 1 else ''})")
    return [Finding(RULE, Status.FAIL, "; ".join(parts), observed="; ".join(f"{e.location}: {e.message}" for e in unread) or None,
                    expected="every Python file of the service read", locations=[e.location for e in unread])]


CHECK = Check(name="source_coverage", rules=(RULE,), run=check, requires=(Need.SOURCE,))
