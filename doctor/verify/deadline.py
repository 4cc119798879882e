"""The --budget as a deadline: every request to a predictor worker may take what is left of the
budget plus a grace, and a worker that overruns it is stopped.

Creating a predictor cannot be cut short usefully, so requests that create one get a larger
grace; runs get a small one. When a request overruns, or a single run takes longer than the
whole budget, the deadline records why, ``BudgetExceeded`` is raised, and measuring stops.
"""

from __future__ import annotations

import time
from typing import TypeVar

from .protocol import Request
from .session import WorkerDied, WorkerSession, WorkerTimedOut

CREATE_GRACE_S = 10.0
RUN_GRACE_S = 2.0
# a Measurer driven outside a verification run (benchmarks, tests) has no --budget
NO_BUDGET_S = 3600.0

R = TypeVar("R")


class BudgetExceeded(WorkerDied):
    """The budget ran out during a request (the worker was stopped), or one run takes longer than it."""


class Deadline:
    def __init__(self, budget_s: float = NO_BUDGET_S):
        self.budget_s = budget_s
        self.started = time.monotonic()
        self.exceeded: str | None = None
        self.creating_s = 0.0

    def left(self) -> float:
        return self.budget_s - (time.monotonic() - self.started)

    def spent(self) -> float:
        return time.monotonic() - self.started

    def timeout(self, grace: float) -> float:
        return max(self.left(), 0.0) + grace

    def request(self, session: WorkerSession, what: str, request: Request[R], creates: bool = False,
                extra_s: float = 0.0) -> R:
        """``session.request`` within what is left of the budget; ``what`` names it if it overruns."""
        session.send(request)
        return self.receive(session, what, request, creates, extra_s)

    def receive(self, session: WorkerSession, what: str, request: Request[R], creates: bool = False,
                extra_s: float = 0.0) -> R:
        """The reply to ``request``, sent earlier, within what is left of the budget (plus ``extra_s``)."""
        left, grace = max(self.left(), 0.0), (CREATE_GRACE_S if creates else RUN_GRACE_S) + extra_s
        began = time.monotonic()
        try:
            return session.receive(left + grace, request)
        except WorkerTimedOut as exc:
            raise self.exceed(f"{what} did not finish in {left + grace:.1f} s ({left:.1f} s left of the {self.budget_s:g} s "
                              f"budget and {grace:.3g} s of grace), so the worker was stopped") from exc
        finally:
            if creates:
                self.creating_s += time.monotonic() - began

    def exceed(self, why: str) -> BudgetExceeded:
        """Record why the budget was exceeded; returns the exception to raise."""
        self.exceeded = self.exceeded or why
        return BudgetExceeded(why)
