"""Blocks that read fields out of extracted text."""
