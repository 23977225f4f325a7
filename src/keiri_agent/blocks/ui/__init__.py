"""UI blocks: blocks that ask a person and pause the run until they answer (seed 002 §3)."""
