"""Imported at start-up by ``paddle_doctor_record.pth`` when ``PADDLE_DOCTOR_RECORD`` is set to
something not blank (and only then): where the variable says on (:func:`.location.switch`), installs
the recording hook, which waits for the service to import ``paddle.inference``."""

import os

from .location import SWITCH, switch

if switch(os.environ, SWITCH):
    from .hook import install

    install()
