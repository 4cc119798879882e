"""Graph-fusion coverage: which fusible patterns the model has, which of them Paddle fused in the
program the predictor really runs, and why the others were not fused."""

from __future__ import annotations


def unavailable(facts) -> str | None:
    """Why a check cannot look at the model's graph although it was read (an unreadable program), or
    None. A check that reads the graph requires Need.GRAPH: the runner skips it where there is none."""
    if facts.graph.error:
        return "the model's program cannot be read (PD-GRAPH-006)"
    return None
