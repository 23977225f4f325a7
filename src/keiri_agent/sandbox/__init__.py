"""The one executor for code that an LLM wrote (seed 000 code_exec, seed 003 CodeAct).

An AST policy rejects obviously dangerous code before anything runs; the boundary is a fresh
process per action, forked from a warm server and confined by OS layers (rlimits, a scrubbed
environment, an unprivileged uid, Landlock, seccomp, a network namespace), supervised for
wall time, output and files. See ``executor``, ``policy``, ``isolation`` and ``supervisor``.
"""

from __future__ import annotations

from keiri_agent.sandbox.cancel import CANCEL_POLL_S, run_cancellable
from keiri_agent.sandbox.executor import SandboxExecutor, default_executor, run
from keiri_agent.sandbox.layers import LayerStatus
from keiri_agent.sandbox.outcome import ExecutionFailure, ExecutionOutcome, LayerReport
from keiri_agent.sandbox.policy import PolicyError, PolicyViolation, check_code
from keiri_agent.sandbox.probe import probe_layers
from keiri_agent.sandbox.profiles import (
    ANALYSIS,
    CODEACT,
    PROFILES,
    SandboxProfile,
    get_profile,
)

__all__ = [
    "ANALYSIS",
    "CANCEL_POLL_S",
    "CODEACT",
    "PROFILES",
    "ExecutionFailure",
    "ExecutionOutcome",
    "LayerReport",
    "LayerStatus",
    "PolicyError",
    "PolicyViolation",
    "SandboxExecutor",
    "SandboxProfile",
    "check_code",
    "default_executor",
    "get_profile",
    "probe_layers",
    "run",
    "run_cancellable",
]
