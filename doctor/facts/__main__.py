"""``python -m paddle_doctor.facts``: writes facts/predictor.py from the table of settings (facts/knobs.py)."""

import sys

from .knobs import CONFIGS, configs_module

CONFIGS.write_text(configs_module(), encoding="utf-8")
sys.stdout.write(f"wrote {CONFIGS}\n")
