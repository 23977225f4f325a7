"""CodeAct's ``eval_fn`` on the sandbox (:class:`SandboxEval`): one workdir for every turn, a
fresh sandbox process for each, the output checked against the requested format by content.

Also the small rules the fallback and the graph share: what counts as CodeAct asking the user
(:func:`is_question`), the format a job's result must be in (:func:`target_format`) and the
CANCELLED error of a stopped conversion (:func:`cancelled_error`).
"""

from __future__ import annotations

import threading
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd

from keiri_agent.agents.cancelled import cancelled_error as work_cancelled
from keiri_agent.agents.convert.codeact import ExecOutput
from keiri_agent.agents.convert.models import ConvertJob
from keiri_agent.agents.convert.progress import STEP_LABELS
from keiri_agent.agents.convert.prompts import exec_feedback
from keiri_agent.agents.convert.verify import check_output, normalize_target
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.sandbox import (
    CANCEL_POLL_S,
    CODEACT,
    ExecutionOutcome,
    SandboxExecutor,
    SandboxProfile,
    run_cancellable,
)

__all__ = [
    "CANCEL_POLL_S",
    "INPUTS_DIR",
    "SandboxEval",
    "cancelled_error",
    "is_question",
    "target_format",
]

INPUTS_DIR = "inputs"


def cancelled_error(step: str) -> BlockError:
    """The CANCELLED error of a conversion stopped at ``step`` (an id of ``STEP_LABELS``)."""
    return work_cancelled("変換", step, label=STEP_LABELS[step])


def is_question(text: str | None) -> bool:
    """True when CodeAct's words (a reply without code) ask the user something."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return any(line.endswith(("？", "?")) for line in lines)


def target_format(job: ConvertJob) -> str:
    """The format the job's result must be in (a chart's image format for viz)."""
    if job.action == "viz":
        return normalize_target(job.chart.format if job.chart else "png") or "png"
    return normalize_target(job.target_format or "")


@dataclass(eq=False, repr=False)
class SandboxEval:
    """CodeAct's ``eval_fn`` on the sandbox: one workdir for every turn, fresh process each.

    ``context`` may only hold DataFrames (they become the action's inputs): a process boundary
    cannot carry functions or live objects, so nothing else is passed, and ``new_vars`` is
    always empty. Files saved by successful runs (outside ``inputs/``) that are in the ``target``
    format (by content) are collected in order; others are reported back to the model. Every
    execution is recorded in ``runs`` (code, success, stdout, the error, files).
    """

    executor: SandboxExecutor
    workdir: Path
    _: KW_ONLY
    profile: SandboxProfile = CODEACT
    cancel: threading.Event | None = None
    target: str = ""
    step: str = "convert"  # the step CodeAct does the work of (convert or viz)
    runs: list[dict[str, Any]] = field(default_factory=list)
    produced: dict[str, None] = field(default_factory=dict, init=False)
    last_success: bool = field(default=False, init=False)
    last_error: str | None = field(default=None, init=False)
    wrong_format: list[str] = field(default_factory=list, init=False)

    def _check(self, files: list[str]) -> tuple[list[str], list[str]]:
        """The files in the target format, and the problems of the others."""
        good: list[str] = []
        problems: list[str] = []
        for rel in files:
            path = self.workdir / rel
            found = check_output(path, self.target) if path.is_file() else []
            if found:
                problems.extend(found)
            else:
                good.append(rel)
        return good, problems

    def __call__(self, code: str, context: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        inputs: dict[str, pd.DataFrame] = {}
        for name, value in context.items():
            if not isinstance(value, pd.DataFrame):
                raise BlockError(
                    f"CodeAct の変数 '{name}'（{type(value).__name__}）はサンドボックスに渡せません。",
                    code=ErrorCode.INTERNAL_ERROR,
                    hint="サンドボックスには DataFrame だけを渡せます。ツール関数は使えません。",
                    details={"variable": name},
                )
            inputs[name] = value
        outcome = self._run(code, inputs)
        files = [f for f in outcome.files_created if PurePosixPath(f).parts[0] != INPUTS_DIR]
        error = _error_text(outcome)
        good, wrong = self._check(files) if outcome.success and self.target else (files, [])
        self.last_success = outcome.success and bool(good)
        self.wrong_format = [] if good else wrong
        self.last_error = error or ("; ".join(self.wrong_format) or None)
        if outcome.success:
            self.produced.update(dict.fromkeys(good))
        # What is recorded of the run is also what the model is told about it.
        result: dict[str, Any] = {
            "success": outcome.success,
            "stdout": outcome.stdout,
            "error": error,
            "files": files,
            "wrong_format": self.wrong_format,
        }
        self.runs.append({"code": code, **result})
        text = exec_feedback(**result, target=self.target)
        report = ExecOutput(
            text,
            stdout=outcome.stdout,
            stderr=outcome.stderr,
            success=outcome.success and not self.wrong_format,
            files=files,
            error=error or ("\n".join(self.wrong_format) or None),
        )
        return report, {}

    def _run(self, code: str, inputs: dict[str, pd.DataFrame]) -> ExecutionOutcome:
        outcome = run_cancellable(
            self.executor,
            self.cancel,
            code,
            workdir=self.workdir,
            profile=self.profile,
            inputs=inputs,
        )
        if outcome is None:
            raise cancelled_error(self.step)
        return outcome


def _error_text(outcome: ExecutionOutcome) -> str | None:
    if outcome.error is not None:
        return "\n".join(
            [f"{outcome.error.type}: {outcome.error.message}", *outcome.error.traceback]
        )
    if outcome.killed_by is not None:
        return outcome.summary_ja()
    return None
