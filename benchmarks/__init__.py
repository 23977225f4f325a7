"""Benchmarks: one script per measured claim, each printing ratios against a baseline run.

Run a benchmark from the repository root, e.g. ``python benchmarks/extraction.py``.
"""
