"""Imported at start-up by ``paddle_doctor_record.pth`` when ``PADDLE_DOCTOR_RECORD`` is set (and only
then): installs the recording hook, which waits for the service to import ``paddle.inference``."""

from .hook import install

install()
