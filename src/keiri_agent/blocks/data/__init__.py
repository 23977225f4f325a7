"""Data blocks: files converted among table formats or plotted (seed 003 ``data.convert``)."""
