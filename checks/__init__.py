"""Built-in checks: one module per check, each a pure function of Facts.

Every module exposes ``CHECK``, registered under the ``paddle_doctor.checks`` entry-point group
in pyproject.toml, the same way a third-party check registers.
"""
