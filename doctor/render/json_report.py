"""The report as one JSON object (``schema_version`` first-class; keys sorted for stable output)."""

from __future__ import annotations

import json

from ..base.serde import to_data
from ..report.report import Report


def render_json(report: Report) -> str:
    """The report as JSON, never a NaN or Infinity in it (``to_data`` writes no float JSON cannot hold)."""
    return json.dumps(to_data(report), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
