"""Tests of the `keiri-agent` command groups."""
