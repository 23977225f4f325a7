"""The plan runner: frames, loops and subflows, backends, run logs, resume and rerun."""
