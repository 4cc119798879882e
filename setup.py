"""Everything is declared in pyproject.toml; this file only puts the recording hook's ``.pth`` at the
top of site-packages, in a wheel and in an editable install, which pyproject cannot say."""

import os

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "paddle_doctor_record.pth"
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "doctor", "record", PTH)


class BuildWithRecordHook(build_py):
    def run(self) -> None:
        super().run()
        self.copy_file(SOURCE, os.path.join(self.build_lib, PTH))

    def get_outputs(self, include_bytecode: bool = True) -> list:
        return [*super().get_outputs(include_bytecode), os.path.join(self.build_lib, PTH)]


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


setup(cmdclass={"build_py": BuildWithRecordHook, "editable_wheel": EditableWithRecordHook})
