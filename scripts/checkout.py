#!/usr/bin/env python3
"""Tools on the checkout as it is, with nothing installed and no link tree: the import names come
from the ``package-dir`` table of pyproject.toml (``paddle_doctor`` -> doctor/, ...).

  scripts/checkout.py doctor ARGS...     # paddle-doctor ARGS, from doctor/ and checks/
  scripts/checkout.py typecheck [PATH]   # mypy (default mode, [tool.mypy]) on every module of the
                                         # package under its real name; errors in PATH only, if given

typecheck exits 1 when mypy reports an error, and says how many.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYPROJECT = REPO / "pyproject.toml"


def package_dirs() -> dict[str, Path]:
    """Each import name of the package and the checkout folder it is, as pyproject's package-dir says."""
    text = PYPROJECT.read_text(encoding="utf-8")
    mapping: dict[str, str]
    if sys.version_info >= (3, 11):
        import tomllib

        mapping = tomllib.loads(text)["tool"]["setuptools"]["package-dir"]
    else:  # Python 3.10 has no tomllib: the one inline table this needs, read by hand
        table = re.search(r"^package-dir\s*=\s*\{([^}]*)\}", text, re.MULTILINE)
        if table is None:
            sys.exit(f"{PYPROJECT}: no package-dir table under [tool.setuptools]")
        mapping = dict(re.findall(r'"([\w.]+)"\s*=\s*"([^"]+)"', table.group(1)))
    return {name: REPO / folder for name, folder in mapping.items()}


class CheckoutFinder(importlib.abc.MetaPathFinder):
    """Imports each mapped package from its checkout folder; its submodules are then found in it."""

    def __init__(self, packages: dict[str, Path]) -> None:
        self.packages = packages

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        folder = self.packages.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(fullname, folder / "__init__.py", submodule_search_locations=[str(folder)])


def run_doctor(args: list[str]) -> None:
    """``python -m paddle_doctor ARGS``, the package imported from the checkout before any installed copy."""
    sys.meta_path.insert(0, CheckoutFinder(package_dirs()))
    sys.argv[1:] = args
    runpy.run_module("paddle_doctor", run_name="__main__", alter_sys=True)


def modules() -> list[tuple[str, Path]]:
    """Every module of the package: its real import name and its checkout file (a C module's, its stub)."""
    return [(".".join((package, *path.relative_to(folder).with_suffix("").parts)).removesuffix(".__init__"), path)
            for package, folder in package_dirs().items() for path in sorted([*folder.rglob("*.py"), *folder.rglob("*.pyi")])]


def typecheck(only: list[str]) -> int:
    from mypy import build
    from mypy.main import process_options
    from mypy.modulefinder import BuildSource

    _, options = process_options(["--config-file", str(PYPROJECT)], require_targets=False)
    sources = [BuildSource(str(path.relative_to(REPO)), module) for module, path in modules()]
    outside = [path for path in only if not Path(path).resolve().is_relative_to(REPO)]
    if outside:
        return usage(f"typecheck: {outside[0]} is not in the checkout {REPO}")
    wanted = tuple(str(Path(path).resolve().relative_to(REPO)) for path in only)
    os.chdir(REPO)  # mypy's cache and the paths it prints are the checkout's
    messages = build.build(sources, options).errors
    shown = [message for message in messages if not wanted or message.startswith(wanted)]
    if shown:
        print("\n".join(shown))
    errors = sum(": error: " in message for message in shown)
    files = len({message.split(":", 1)[0] for message in shown if ": error: " in message})
    where = f" in {' '.join(wanted)}" if wanted else ""
    print(f"mypy: {errors} errors in {files} files{where} ({len(sources)} modules checked)" if errors
          else f"mypy: no errors{where} ({len(sources)} modules checked)", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["doctor"]:
        run_doctor(argv[1:])
        return 0
    if argv[:1] == ["typecheck"]:
        return typecheck(argv[1:])
    return usage(f"usage: {sys.argv[0]} doctor ARGS... | typecheck [PATH...]")


def usage(line: str) -> int:
    print(line, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
