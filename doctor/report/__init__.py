"""The report: one model built from the facts and the findings, which renderers only render."""
