"""Blocks made for the plan engine's tests, registered from ``specs/`` like a user's own blocks."""

from pathlib import Path

SPEC_DIR = Path(__file__).parent / "specs"
