"""Secrets out of the recorded environment, by the variable's name and by the shape of its value.

Facts travel (a support ticket, a CI artifact), so a value is hidden when its name says it is a
secret (``DB_PASS``, ``API_KEY``, ``HF_TOKEN``), and within any other value the parts shaped like
one are cut out: ``key=value`` secrets in connection strings (``Password=...;``,
``AccountKey=...``), credentials in URLs, bearer tokens and long random tokens. What the checks
read (thread counts, paths, ``FLAGS_*``, GPU ids) has none of those shapes and stays as it is.
"""

from __future__ import annotations

import math
import re
from collections import Counter

REDACTED = "<redacted>"
SECRET_NAME = re.compile(
    r"TOKEN|KEY|SECRET|PASSW|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION|SIGNATURE|(?:^|_)PASS(?:_|$)|_PWD?(?:_|$)", re.I)  # not PWD, the working directory
SECRET_PAIR = re.compile(
    r"(?P<key>\b(?:[a-z]+[_ ]?)?(?:password|passwd|pwd|pass|secret|token|key|signature|sig|credentials?)\s*(?:=|:\s)\s*)"
    r"(?P<value>\"[^\"]*\"|'[^']*'|[^;&,\s]+)", re.I)
URL_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.I)
BEARER = re.compile(r"(?P<key>\bbearer\s+)(?P<value>\S+)", re.I)
TOKEN_RUN = re.compile(r"[A-Za-z0-9+_=-]{32,}")
TOKEN_MIN_ENTROPY = 4.0  # bits per character: random base62/base64 runs of 32 are above
UUID = re.compile(r"(?:[A-Z]+-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)  # GPU ids


def redact(name: str, value: str) -> str:
    """``value`` as it may be recorded for the variable ``name``."""
    if SECRET_NAME.search(name):
        return REDACTED
    value = URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", value)
    value = SECRET_PAIR.sub(lambda m: m.group("key") + REDACTED, value)
    value = BEARER.sub(lambda m: m.group("key") + REDACTED, value)
    return TOKEN_RUN.sub(lambda m: REDACTED if _looks_random(m.group()) else m.group(), value)


def redact_environment(environ: dict[str, str]) -> dict[str, str]:
    return {name: redact(name, environ[name]) for name in sorted(environ)}


def _looks_random(run: str) -> bool:
    mixed = any(c.isdigit() for c in run) and any(c.isupper() for c in run) and any(c.islower() for c in run)
    if UUID.fullmatch(run) or not mixed:  # hex digests and snake_case names are one case; random tokens mix all three
        return False
    counts = Counter(run)
    entropy = -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())
    return entropy >= TOKEN_MIN_ENTROPY
