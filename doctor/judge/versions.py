"""Version ranges as known_issues.yaml writes them (``>=3.3.0,<=3.3.1``, ``==3.3.*``, ``*`` for any):
a small comparator of release numbers with their pre-releases (``3.0.0b1`` and ``3.0.0rc1`` come
before ``3.0.0``, a ``.dev`` build before those). A post-release (``2.6.1.post117``) and a local part
(``3.0.0+cu118``) compare as their release: the index a wheel came from is no newer code."""

from __future__ import annotations

import re
from dataclasses import dataclass

VERSION = re.compile(r"v?(?P<release>\d+(?:\.\d+)*)(?:[-_.]?(?P<pre>dev|alpha|beta|rc|a|b|c)[-_.]?(?P<number>\d*))?"
                     r"(?:[-_.]?post\d*)?(?:\+[A-Za-z0-9_.]*)?", re.IGNORECASE)
PRE_RELEASES = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "c": 3, "rc": 3}
FINAL = 4  # a release sorts after each of its pre-releases
CLAUSE = re.compile(r"(?P<operator>==|!=|>=|<=|>|<)\s*(?P<version>\S+)")
ANY = "*"


class VersionRangeError(ValueError):
    """A version range that is not ``OP VERSION`` clauses joined by commas; the message says what is wrong."""


@dataclass(frozen=True, order=True)
class Version:
    """A version as it compares: its release numbers without trailing zeros (``3.3.0`` is ``3.3``), then
    the kind and number of its pre-release (a final release has the highest kind)."""

    release: tuple[int, ...]
    pre: tuple[int, int] = (FINAL, 0)

    @property
    def final(self) -> bool:
        return self.pre[0] == FINAL


def parse_version(text: object) -> Version | None:
    """The version ``text`` says (``3.3.1``, ``3.0.0b2``, ``12.6``, ``v9.5.1``); None when it is no such version."""
    match = VERSION.fullmatch(str(text).strip()) if text is not None else None
    if match is None:
        return None
    release = _trimmed(tuple(int(part) for part in match.group("release").split(".")))
    pre = match.group("pre")
    return Version(release, (PRE_RELEASES[pre.lower()], int(match.group("number") or 0)) if pre else (FINAL, 0))


def _trimmed(numbers: tuple[int, ...]) -> tuple[int, ...]:
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]
    return numbers


@dataclass(frozen=True)
class Clause:
    """One comparison: ``operator`` and the version compared with; ``prefix`` for ``==3.3.*`` (the release numbers it starts with)."""

    operator: str
    version: Version
    prefix: tuple[int, ...] | None = None

    def holds(self, version: Version) -> bool:
        if self.prefix is not None:
            starts = version.release[:len(self.prefix)] == self.prefix or (
                _trimmed(self.prefix) == version.release and len(version.release) < len(self.prefix))
            return starts if self.operator == "==" else not starts
        compare = {"==": version == self.version, "!=": version != self.version, ">=": version >= self.version,
                   "<=": version <= self.version, ">": version > self.version, "<": version < self.version}
        return compare[self.operator]


@dataclass(frozen=True)
class VersionRange:
    """Versions every clause holds for, written as given (``>=3.3.0,<=3.3.1``); ``*``: any version."""

    text: str
    clauses: tuple[Clause, ...] = ()

    def contains(self, version: Version) -> bool:
        return all(clause.holds(version) for clause in self.clauses)

    def __str__(self) -> str:
        return self.text


def parse_range(text: object) -> VersionRange:
    """The range ``text`` writes; VersionRangeError saying which clause is no ``OP VERSION``."""
    if not isinstance(text, str) or not text.strip():
        raise VersionRangeError("expected a version range in quotes, such as \">=3.3.0,<=3.3.1\" or \"*\"")
    written = " ".join(text.split())
    if written == ANY:
        return VersionRange(ANY)
    clauses = []
    for part in (part.strip() for part in written.split(",")):
        match = CLAUSE.fullmatch(part)
        if match is None:
            raise VersionRangeError(f"{part!r} is no comparison; expected OP VERSION with OP one of ==, !=, >=, <=, >, <")
        operator, version = match.group("operator"), match.group("version")
        if version.endswith(".*") and operator in ("==", "!="):
            numbers = version[:-2]
            if not re.fullmatch(r"\d+(\.\d+)*", numbers):
                raise VersionRangeError(f"{part!r}: a wildcard follows release numbers only (==3.3.*)")
            prefix = tuple(int(n) for n in numbers.split("."))
            clauses.append(Clause(operator, Version(_trimmed(prefix)), prefix))
            continue
        parsed = parse_version(version)
        if parsed is None:
            raise VersionRangeError(f"{part!r}: {version!r} is no version (such as 3.3.1, 3.0.0b2 or 12.6)")
        clauses.append(Clause(operator, parsed))
    return VersionRange(written, tuple(clauses))
