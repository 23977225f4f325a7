"""The agents of the seeds: analysis (000), help desk (001), conversion (003)."""
