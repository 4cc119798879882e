"""Secrets out of everything the doctor records, by a variable's name and by the shape of the text.

Facts travel (a support ticket, a CI artifact), so a value is hidden when its name says it is a
secret (``DB_PASS``, ``API_KEY``, ``HF_TOKEN``), and within any other text (``redact_text``: an
environment value, a command-line argument, a string literal of the service's source, a pod's
log) the parts shaped like one are cut out: ``key=value`` secrets (``password=...``,
``Password=...;``, ``AccountKey=...``, ``--api-key=...``), credentials in URLs, bearer and basic
authorizations, JWTs, private key blocks, the tokens of AWS, GitHub, GitLab, Slack and others by
their prefix, and long random tokens. The words around a secret stay, so a reader sees what was
cut: ``postgres://<redacted>@db:5432/app``. What the checks read (thread counts, paths,
``FLAGS_*``, GPU ids) has none of those shapes and stays as it is.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

REDACTED = "<redacted>"
# words of a variable's name (split at "_"): TOKENIZER_THREADS and KEYFRAME_RATE are no secrets
SECRET_WORDS = {"TOKEN", "TOKENS", "KEY", "KEYS", "SECRET", "SECRETS", "PASS", "PASSWD", "PASSWORD", "PASSPHRASE", "PWD", "PW",
                "CREDENTIAL", "CREDENTIALS", "CREDS", "AUTH", "PRIVATE", "COOKIE", "SESSION", "SIGNATURE", "APIKEY", "DSN"}
SECRET_WORD_ENDINGS = ("TOKEN", "SECRET", "PASSWORD", "APIKEY", "ACCESSKEY", "SECRETKEY", "PRIVATEKEY")
NOT_SECRET_NAMES = {"PWD", "OLDPWD"}  # the working directories
SECRET_KEY = r"(?:password|passwd|passphrase|pwd|pass|secret|token|api[_-]?key|access[_-]?key|key|signature|sig|credentials?|auth|cookie)"
# Each shape starts only where a run of its characters starts, and what may backtrack is bounded:
# a megabyte of "a://a://..." or "-----..." is cut in linear time.
CUT = re.escape(REDACTED)  # a value cut once stays as it was cut, with what follows it


def _unquoted(stops: str = "") -> str:
    """A value up to whitespace or ``stops``; a quote ends it only where no word follows (``'password=x')``)."""
    return rf"(?:[^{stops}\s'\"]|['\"](?=\w))+"


VALUE = rf"(?P<value>{CUT}|\"[^\"]*\"|'[^']*'|{_unquoted(';&,')})"
SECRET_PAIR = re.compile(rf"(?P<key>\b(?:[a-z]+[_ ]?)?{SECRET_KEY}\s*(?:=|:\s)\s*){VALUE}", re.I)
SECRET_COLON = re.compile(rf"(?P<key>\b(?:[a-z]+[_-]?)?(?:password|passwd|pwd|secret|token):)(?P<value>{CUT}|{_unquoted(';&,')})", re.I)
SECRET_JSON = re.compile(rf"(?P<key>([\"'])[a-z_-]*{SECRET_KEY}\2\s*:\s*)(?P<value>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')", re.I)
SECRET_FLAG = re.compile(rf"(?P<key>(?<![\w-])--?[a-z-]*{SECRET_KEY}(?:=|\s+))(?P<value>{CUT}|\"[^\"]*\"|'[^']*'|(?!-){_unquoted()})", re.I)
AUTHORIZATION = re.compile(rf"(?P<key>\b(?:proxy-)?authorization\s*[:=]\s*(?:[a-z]+\s+)?)(?P<value>{CUT}|{_unquoted(',;')})", re.I)
BEARER = re.compile(rf"(?P<key>\bbearer\s+)(?P<value>{CUT}|{_unquoted()})", re.I)
# user:password@ (a password may hold "/", as an AWS secret key does; "host:8080/path@x" is a port, not one)
URL_USERINFO = re.compile(r"(?P<scheme>(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}://)(?:[^/@\s]{1,256}|[^/@\s:]{1,256}:(?!\d+/)[^@\s]{1,256})@", re.I)
PRIVATE_KEY = re.compile(r"(?P<begin>-----BEGIN (?P<kind>[A-Z0-9 ]*PRIVATE KEY[A-Z ]*)-----).*?(?:-----END (?P=kind)-----|\Z)", re.S)
JWT = re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")
PREFIXED_TOKEN = re.compile("|".join((
    r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA)[A-Z0-9]{16}(?![A-Z0-9])",  # AWS key ids
    (r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"  # GitHub
    r"|gl(?:pat|ptt|dt|rt|cbt|oas)-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|sk-(?:proj-)?[A-Za-z0-9_-]{20,}|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"  # OpenAI, Stripe
    r"|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{50,})"),  # Google, Hugging Face, npm, PyPI
    r"(?<=hooks\.slack\.com/services/)[A-Za-z0-9/]+",
)))
TOKEN_RUN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
HEX_SECRET = re.compile(r"(?<![0-9a-f:])[0-9a-f]{64,}(?![0-9a-f])", re.I)  # long hex keys; 40 is a git commit, sha256:... a digest
# the shapes that keep their key (and BEARER after them), in the order they are tried, each with the signs one of which it needs
KEYED_SHAPES = ((SECRET_JSON, ":"), (SECRET_FLAG, "-"), (SECRET_PAIR, "=:"), (SECRET_COLON, ":"), (AUTHORIZATION, "=:"))
TAIL_MARGIN = 4096  # longer than any secret the shapes cut
CUT_THROUGH = re.compile(r"\A[^\n]*\n|\A\S*")
PATH_WORD_JOINS = set("_-.")
TOKEN_MIN_ENTROPY = 4.0  # bits per character: random base62/base64 runs of 32 are above
# What every shape above needs: a sign, that is "=", "@", "-----" or "bearer"; a colon where a shape has
# one (before a space, after a quote, or after the key words that take one: "module:CHECK" is none); a key
# word with a dash before it as a flag; or a run of 15 or more token characters (the shortest token a shape
# cuts: xoxb- and 10) that holds a capital or "+", or a known token's start or a long hex key. A text with
# none of them is returned as it is. The plain signs are looked for as text, the others only where a colon
# or a dash is there at all: a baseline's rules are read this way at every healthcheck.
SIGNS = ("=", "@", "-----")
COLON_SIGN = re.compile(r":\s|[\"']\s*:|(?:password|passwd|pwd|secret|token|authorization)\s*:", re.I)
FLAG_SIGN = re.compile(rf"-(?<![\w-]-)-?[a-z-]*{SECRET_KEY}\s", re.I)  # "-" first: searched for as text
TOKENISH = re.compile(r"[A-Za-z0-9_+/.-]{15,}")
PLAIN_RUN = re.compile(r"[a-z0-9_./-]+")  # a path, a snake_case name
UUID = re.compile(r"(?:[A-Z]+-)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)  # GPU ids


def redact(name: str, value: str) -> str:
    """``value`` as it may be recorded for the variable ``name``."""
    return REDACTED if secret_name(name) else redact_text(value)


def redact_text(text: str) -> str:
    """``text`` with every part shaped like a secret replaced by ``<redacted>``, the words around it kept."""
    return cut_every_shape(text) if _may_hold_a_secret(text) else text


def cut_every_shape(text: str) -> str:
    """``redact_text`` without its first look: each shape tried in turn, where the text holds what it needs."""
    if "-----" in text:
        text = PRIVATE_KEY.sub(lambda m: f"{m.group('begin')}{REDACTED}-----END {m.group('kind')}-----", text)
    if "eyJ" in text:
        text = JWT.sub(REDACTED, text)
    if "@" in text:
        text = URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    text = PREFIXED_TOKEN.sub(REDACTED, text)
    for shape, signs in KEYED_SHAPES:
        if any(sign in text for sign in signs):
            text = shape.sub(_keep_key, text)
    if "bearer" in text.lower():
        text = BEARER.sub(_keep_key, text)
    text = HEX_SECRET.sub(REDACTED, text)
    return TOKEN_RUN.sub(lambda m: REDACTED if _looks_random(m.group()) else m.group(), text)


def _keep_key(match: re.Match[str]) -> str:
    return match.group("key") + REDACTED


def _may_hold_a_secret(text: str) -> bool:
    if any(sign in text for sign in SIGNS) or "bearer" in text.lower():
        return True
    if (":" in text and COLON_SIGN.search(text)) or ("-" in text and FLAG_SIGN.search(text)):
        return True
    return any(not PLAIN_RUN.fullmatch(run) or PREFIXED_TOKEN.search(run) or HEX_SECRET.search(run)
               for run in TOKENISH.findall(text))


SECRET_FLAG_ALONE = re.compile(rf"--?[a-z-]*{SECRET_KEY}", re.I)  # ``--password`` whose value is the next argument


def redact_arguments(argv: list[str], chars: int | None = None) -> list[str]:
    """A command line's arguments redacted one by one, and the argument after a secret's flag given
    alone (``--password hunter2``, ``--api-key KEY``); each cut to ``chars`` where given, past the
    redaction of a window that holds any secret the cut would halve."""
    redacted = []
    for index, argument in enumerate(argv):
        flagged = index > 0 and SECRET_FLAG_ALONE.fullmatch(argv[index - 1]) is not None and not argument.startswith("-")
        text = REDACTED if flagged else redact_text(argument if chars is None else argument[:chars + TAIL_MARGIN])
        redacted.append(text if chars is None else text[:chars])
    return redacted


def redacted_tail(text: str, chars: int) -> str:
    """The last ``chars`` of ``text`` (a child's error output), redacted: a secret the cut would halve
    is redacted whole first, and the line (or word) the first cut goes through is dropped, so no
    half of a secret is left for the shapes to miss."""
    window = text[-(chars + TAIL_MARGIN):]
    if len(window) < len(text):
        window = CUT_THROUGH.sub("", window, count=1)
    return redact_text(window)[-chars:]


def secret_name(name: str) -> bool:
    """Whether a variable's name says it holds a secret: one of its words (split at "_") is one."""
    if name.upper() in NOT_SECRET_NAMES:
        return False
    words = [word for word in name.upper().split("_") if word]
    return any(word in SECRET_WORDS or word.endswith(SECRET_WORD_ENDINGS) or word.startswith("PASSW") for word in words)


def redact_environment(environ: dict[str, str]) -> dict[str, str]:
    return {name: redact(name, environ[name]) for name in sorted(environ)}


def redact_recorded(data: Any) -> Any:
    """A JSON document the doctor reads back (recorded facts, a baseline, a pod's report), redacted
    as the doctor redacts what it probes: one recorded by an older doctor, or written by hand, may
    hold a secret. What the doctor wrote itself comes back unchanged."""
    return _redacted(data, {})


def _redacted(data: Any, done: dict[str, str]) -> Any:
    """``redact_recorded``, each distinct text of the document redacted once (``done``): a baseline pins the
    same documentation links and fixes rule after rule, and the healthcheck reads it at every probe."""
    if isinstance(data, str):
        cut = done.get(data)
        if cut is None:
            cut = done[data] = redact_text(data)
        return cut
    if isinstance(data, list):
        return [_redacted(item, done) for item in data]
    if isinstance(data, dict):
        return {key: redact_environment(value) if key == "environ" and _is_environment(value) else _redacted(value, done)
                for key, value in data.items()}
    return data


def _random_piece(piece: str) -> bool:
    """A part of a run between slashes that may be base64: long, both cases, no word joined by ``_ - .``
    (``ch_PP-OCRv4_det_infer`` is a model folder's name; ``wJalrXUtnFEMI`` may be a key's part)."""
    return len(piece) >= 8 and not PATH_WORD_JOINS & set(piece) and piece.lower() != piece and piece.upper() != piece


def _is_environment(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(item, str) for item in value.values())


def _looks_random(run: str) -> bool:
    if run.startswith("/") or "/" in run and not any(map(_random_piece, run.split("/"))):  # a path
        return False
    mixed = any(c.isdigit() for c in run) and any(c.isupper() for c in run) and any(c.islower() for c in run)
    if UUID.fullmatch(run) or not mixed:  # hex digests and snake_case names are one case; random tokens mix all three
        return False
    counts = Counter(run)
    entropy = -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())
    return entropy >= TOKEN_MIN_ENTROPY
