"""Renderers turn a Report into text; they decide nothing."""
