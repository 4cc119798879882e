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
# words of a variable's name (split at "_"): TOKENIZER_THREADS and KEYFRAME_RATE are no secrets
SECRET_WORDS = {"TOKEN", "TOKENS", "KEY", "KEYS", "SECRET", "SECRETS", "PASS", "PASSWD", "PASSWORD", "PASSPHRASE", "PWD", "PW",
                "CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH", "PRIVATE", "COOKIE", "SESSION", "SIGNATURE", "APIKEY", "DSN"}
SECRET_WORD_ENDINGS = ("TOKEN", "SECRET", "PASSWORD", "APIKEY", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY")
NOT_SECRET_NAMES = {"PWD", "OLDPWD"}  # the working directories
SECRET_KEY = r"(?:password|passwd|passphrase|pwd|pass|secret|token|api[_-]?key|access[_-]?key|key|signature|sig|credentials?)"
SECRET_PAIR = re.compile(
    rf"(?P<key>\b(?:[a-z]+[_ ]?)?{SECRET_KEY}\s*(?:=|:\s)\s*)"
    r"(?P<value>\"[^\"]*\"|'[^']*'|[^;&,\s]+)", re.I)
SECRET_COLON = re.compile(r"(?P<key>\b(?:[a-z]+[_-]?)?(?:password|passwd|pwd|secret|token):)(?P<value>[^\s;&,\"']+)", re.I)
SECRET_JSON = re.compile(rf"(?P<key>\"[a-z_-]*{SECRET_KEY}\"\s*:\s*)(?P<value>\"(?:[^\"\\]|\\.)*\")", re.I)
SECRET_FLAG = re.compile(rf"(?P<key>--?[a-z-]*{SECRET_KEY}(?:=|\s+))(?P<value>\"[^\"]*\"|'[^']*'|[^\s-][^\s]*)", re.I)
URL_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.I)
BEARER = re.compile(r"(?P<key>\bbearer\s+)(?P<value>\S+)", re.I)
TOKEN_RUN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
HEX_SECRET = re.compile(r"(?<![0-9a-f:])[0-9a-f]{64,}(?![0-9a-f])", re.I)  # long hex keys; 40 is a git commit, sha256:... a digest
TOKEN_MIN_ENTROPY = 4.0  # bits per character: random base62/base64 runs of 32 are above
UUID = re.compile(r"(?:[A-Z]+-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)  # GPU ids


def redact(name: str, value: str) -> str:
    """``value`` as it may be recorded for the variable ``name``."""
    if secret_name(name):
        return REDACTED
    return redact_text(value)


def redact_text(text: str) -> str:
    """Free text (a value, a line a process printed) with the parts shaped like a secret cut out."""
    text = URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    for shape in (SECRET_JSON, SECRET_FLAG, SECRET_PAIR, SECRET_COLON, BEARER):
        text = shape.sub(lambda m: m.group("key") + REDACTED, text)
    text = HEX_SECRET.sub(REDACTED, text)
    return TOKEN_RUN.sub(lambda m: REDACTED if _looks_random(m.group()) else m.group(), text)


def secret_name(name: str) -> bool:
    """Whether a variable's name says it holds a secret: one of its words (split at "_") is one."""
    if name.upper() in NOT_SECRET_NAMES:
        return False
    words = [word for word in name.upper().split("_") if word]
    return any(word in SECRET_WORDS or word.endswith(SECRET_WORD_ENDINGS) or word.startswith("PASSW") for word in words)


def redact_environment(environ: dict[str, str]) -> dict[str, str]:
    return {name: redact(name, environ[name]) for name in sorted(environ)}


def _looks_random(run: str) -> bool:
    if run.startswith("/"):  # a path
        return False
    mixed = any(c.isdigit() for c in run) and any(c.isupper() for c in run) and any(c.islower() for c in run)
    if UUID.fullmatch(run) or not mixed:  # hex digests and snake_case names are one case; random tokens mix all three
        return False
    counts = Counter(run)
    entropy = -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())
    return entropy >= TOKEN_MIN_ENTROPY
