"""Everything is declared in pyproject.toml; this file only says what pyproject cannot: the recording
hook's ``.pth`` goes at the top of site-packages, in a wheel and in an editable install; the data
files kept at the top of the source tree (``rules.yaml``, ``wrappers.yaml``, ``known_issues.yaml``) go into the package in a
wheel (an editable install reads them where they are: ``paddle_doctor.judge.rules.packaged_file``); and the
recorder's C module is built where a compiler is at hand, the install going on without it where none
is (the recorder then notes runs in Python). ``PADDLE_DOCTOR_NO_EXTENSIONS=1`` leaves it out: a wheel
for every Python (``py3-none-any``), as aiohttp's and multidict's variables do."""

import os

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
PTH = "paddle_doctor_record.pth"
SOURCE = os.path.join(HERE, "doctor", "recorder", PTH)
# these and the .pth are listed in MANIFEST.in too, so that the sdist carries them
TOP_LEVEL_DATA = ("rules.yaml", "wrappers.yaml", "known_issues.yaml")


class BuildWithRecordHook(build_py):
    def run(self) -> None:
        super().run()
        for source, target in self._extra_files():
            self.copy_file(source, target)

    def get_outputs(self, include_bytecode: bool = True) -> list:
        return [*super().get_outputs(include_bytecode), *(target for _, target in self._extra_files())]

    def _extra_files(self) -> list[tuple[str, str]]:
        pth = [(SOURCE, os.path.join(self.build_lib, PTH))]
        if self.editable_mode:  # the package is its source folders, and packaged_file finds the data beside them
            return pth
        package = os.path.join(self.build_lib, "paddle_doctor")
        return [*pth, *((os.path.join(HERE, name), os.path.join(package, name)) for name in TOP_LEVEL_DATA)]


class EditableWithRecordHook(editable_wheel):
    def _select_strategy(self, *args, **kwargs):
        return _AlsoThePth(super()._select_strategy(*args, **kwargs))


class _AlsoThePth:
    """An editable install's strategy that writes the ``.pth`` beside what it writes itself."""

    def __init__(self, strategy) -> None:
        self.strategy = strategy

    def __call__(self, wheel, files, mapping) -> None:
        self.strategy(wheel, files, mapping)
        with open(SOURCE, encoding="utf-8") as source:
            wheel.writestr(PTH, source.read())

    def __enter__(self):
        self.strategy.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.strategy.__exit__(*exc)


class BuildExtOrSay(build_ext):
    """``optional=True`` lets the install go on without the C module; this says so where pip shows it."""

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            print(f"paddle-doctor: the recorder's C module was not built ({exc}); runs are noted in Python, "
                  "several microseconds more per run()")
            raise


NATIVE = Extension("paddle_doctor.recorder._native", [os.path.join("doctor", "recorder", "_native.c")], optional=True)
WITHOUT = os.environ.get("PADDLE_DOCTOR_NO_EXTENSIONS", "") not in ("", "0")

# every folder of doctor/ with an __init__.py is a package, under its import name (pyproject's package-dir)
PACKAGES = ["paddle_doctor", "paddle_doctor.checks", *(f"paddle_doctor.{name}" for name in find_packages(os.path.join(HERE, "doctor")))]

setup(cmdclass={"build_py": BuildWithRecordHook, "editable_wheel": EditableWithRecordHook, "build_ext": BuildExtOrSay},
      ext_modules=[] if WITHOUT else [NATIVE], packages=PACKAGES)
