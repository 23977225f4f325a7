"""Plan generation (seed 004): Top-K blocks, templates and compose, two-stage generation,
self-repair, the requirements builder and the design chat."""
