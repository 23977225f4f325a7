"""What a benchmark ran on: Python, OS, CPU model and core count, plus the libraries it compares."""

from __future__ import annotations

import os
import platform
from pathlib import Path

__all__ = ["machine_note"]


def machine_note(libraries: str = "") -> str:
    """One line for a benchmark's header; ``libraries`` names the measured packages' versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    note = (
        f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"CPU: {cpu} x{os.cpu_count()}"
    )
    return f"{note}; {libraries}" if libraries else note
