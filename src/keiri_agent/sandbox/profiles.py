"""Limit profiles of the sandbox: ``analysis`` (seed 000) and ``codeact`` (seed 003 §4).

A profile is every number and list that bounds one action: CPU and wall seconds, memory,
file sizes and counts, captured output, and the modules user code may import. Limits are named
constants so they can be read, documented and overridden in one place (``--cpu-seconds`` etc.).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from keiri_agent.errors import check_choice, input_error

__all__ = [
    "ANALYSIS",
    "CODEACT",
    "PROFILES",
    "SAFE_STDLIB_MODULES",
    "SandboxProfile",
    "get_profile",
]

MiB = 1024 * 1024

# Standard-library modules with no file, process, network or introspection reach.
SAFE_STDLIB_MODULES: frozenset[str] = frozenset(
    {
        "math",
        "cmath",
        "statistics",
        "decimal",
        "fractions",
        "random",
        "datetime",
        "calendar",
        "zoneinfo",
        "time",
        "json",
        "csv",
        "re",
        "string",
        "textwrap",
        "unicodedata",
        "collections",
        "collections.abc",
        "itertools",
        "functools",
        "operator",
        "heapq",
        "bisect",
        "copy",
        "enum",
        "dataclasses",
        "typing",
        "numbers",
        "warnings",
        "pprint",
        "io",
        "base64",
        "hashlib",
        "uuid",
    }
)

# Third-party packages of seed 000's allowlist; submodules must be listed explicitly.
ANALYSIS_PACKAGES: frozenset[str] = frozenset(
    {
        "pandas",
        "numpy",
        "numpy.linalg",
        "numpy.random",
        "numpy.fft",
        "matplotlib",
        "matplotlib.pyplot",
        "matplotlib.ticker",
        "matplotlib.dates",
        "matplotlib.colors",
        "matplotlib.cm",
        "matplotlib.patches",
        "matplotlib.gridspec",
        "matplotlib.font_manager",
        "seaborn",
        "sklearn",
        "sklearn.linear_model",
        "sklearn.cluster",
        "sklearn.preprocessing",
        "sklearn.metrics",
        "sklearn.model_selection",
        "sklearn.decomposition",
        "sklearn.ensemble",
        "sklearn.tree",
        "sklearn.neighbors",
        "sklearn.pipeline",
        "sklearn.impute",
    }
)


@dataclass(frozen=True)
class SandboxProfile:
    """Every bound of one action. Sizes are bytes, times seconds."""

    name: str
    cpu_seconds: int
    wall_seconds: float
    memory_bytes: int  # address space granted on top of the warm interpreter's own
    fsize_bytes: int  # largest single file the code may write
    max_files: int  # files the action may create in its workdir
    max_total_bytes: int  # all bytes the action may write into its workdir
    output_bytes: int  # captured stdout, and separately stderr, before the action is killed
    nofile: int = 256  # open file descriptors
    max_tasks: int = 64  # processes and threads of one action (its pids cgroup)
    allowed_imports: frozenset[str] = field(default_factory=frozenset)

    def with_overrides(
        self,
        *,
        cpu_seconds: int | None = None,
        wall_seconds: float | None = None,
        memory_mb: int | None = None,
    ) -> SandboxProfile:
        """The profile with CLI-style overrides (``--cpu-seconds``, ``--wall-seconds``, ...)."""
        for label, value in (
            ("cpu_seconds", cpu_seconds),
            ("wall_seconds", wall_seconds),
            ("memory_mb", memory_mb),
        ):
            if value is not None and value <= 0:
                raise input_error(
                    f"サンドボックスの制限値 {label} は正の数で指定してください（指定値: {value}）。",
                    "--cpu-seconds / --wall-seconds / --memory-mb には 1 以上を指定します。",
                    **{label: value},
                )
        return replace(
            self,
            cpu_seconds=cpu_seconds if cpu_seconds is not None else self.cpu_seconds,
            wall_seconds=wall_seconds if wall_seconds is not None else self.wall_seconds,
            memory_bytes=memory_mb * MiB if memory_mb is not None else self.memory_bytes,
        )


# Seed 000: code_exec runs at most 3 minutes and 1 GB per action.
ANALYSIS = SandboxProfile(
    name="analysis",
    cpu_seconds=180,
    wall_seconds=180.0,
    memory_bytes=1024 * MiB,
    fsize_bytes=200 * MiB,
    max_files=1_000,
    max_total_bytes=1024 * MiB,
    output_bytes=1 * MiB,
    allowed_imports=SAFE_STDLIB_MODULES | ANALYSIS_PACKAGES,
)

# Seed 003 §4: CPU 120 s, memory 512 MB, file size 10 MB.
CODEACT = SandboxProfile(
    name="codeact",
    cpu_seconds=120,
    wall_seconds=150.0,
    memory_bytes=512 * MiB,
    fsize_bytes=10 * MiB,
    max_files=200,
    max_total_bytes=100 * MiB,
    output_bytes=256 * 1024,
    allowed_imports=SAFE_STDLIB_MODULES | ANALYSIS_PACKAGES,
)

PROFILES: dict[str, SandboxProfile] = {p.name: p for p in (ANALYSIS, CODEACT)}


def get_profile(name: str | SandboxProfile) -> SandboxProfile:
    if isinstance(name, SandboxProfile):
        return name
    check_choice(
        "profile",
        name,
        tuple(PROFILES),
        message=f"サンドボックスのプロファイル '{name}' はありません。",
    )
    return PROFILES[name]
