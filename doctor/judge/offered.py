"""What a recommendation offers, in the same words in every format and in PD-CFG-001: a configuration
measured faster than the service's, one whose changes each measured faster where they were adopted
but were not confirmed as a whole (the final race undecided or cut short), one that a rule the
service breaks moved it to whatever it measured (threads within the CPU budget, PD-CPU-010; oneDNN's
shape cache bounded, PD-MEM-001), or the service's own, kept as it is."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base.vocabulary import Effect
from .verdict_words import describe

if TYPE_CHECKING:
    from ..facts.verification import Recommendation

TITLE = "Recommended configuration"
ENFORCED_WORDS = {"PD-CPU-010": "within the CPU budget", "PD-MEM-001": "with oneDNN's shape cache bounded"}


def measured_faster(recommendation: Recommendation) -> bool:
    """Measured as a whole faster than the service's configuration, with its outputs unchanged."""
    comparison = recommendation.comparison
    return comparison is not None and comparison.verdict == Effect.IMPROVED and not comparison.changes_outputs


def kept(recommendation: Recommendation) -> bool:
    """The service's configuration itself: nothing to change."""
    return recommendation.config == recommendation.baseline.config


def title(recommendation: Recommendation) -> str:
    """``Recommended configuration``, qualified where it is not measured faster."""
    if measured_faster(recommendation):
        return TITLE
    if recommendation.unconfirmed:
        return f"{TITLE}, not confirmed as a whole"
    if kept(recommendation):
        return f"{TITLE}: keep the service's"
    within = " and ".join(f"{ENFORCED_WORDS[rule]} ({rule})" for rule in recommendation.enforced)
    return f"{TITLE}{': ' + within if within else ''}, not measured faster"


def headline(recommendation: Recommendation) -> str:
    """What was measured of the recommendation as a whole, and why it is offered when not for speed."""
    comparison = recommendation.comparison
    measured = describe(comparison) if comparison else "not measured as a whole"
    if measured_faster(recommendation):
        return f"measured as a whole: {measured}"
    if recommendation.unconfirmed:
        return f"each change measured faster where it was adopted; {recommendation.unconfirmed}"
    if kept(recommendation):
        return "the service's configuration is kept" + (f": {recommendation.steps[-1]}" if recommendation.steps else "")
    if recommendation.enforced:
        return f"the recommendation keeps {', '.join(recommendation.enforced)}, which the service breaks, whatever it measured: {measured}"
    return f"not offered as faster: {measured}"
