"""Plan files: YAML text → raw mapping with a source map (line/column per YAML path) → Plan.

Every value's position is kept so the validator can point at the line a user must fix.
Subflow ``plan_id`` values resolve to ``<designs>/<plan_id>.yaml``.

The YAML is read (and measured against the size limits) by :mod:`.yaml_read`, in one pass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from keiri_agent.errors import BlockError, ErrorCode, UserFile
from keiri_agent.plan._dsl.issue_codes import IssueCode
from keiri_agent.plan._dsl.issues import Loc, PlanIssue
from keiri_agent.plan._dsl.yaml_read import (
    LIMIT_HINT,
    MAX_YAML_ALIAS_NODES,
    MAX_YAML_ALIASES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    YamlLimitError,
    load_yaml,
    read_yaml,
)
from keiri_agent.yaml_words import yaml_problem

__all__ = [
    "MAX_PLAN_BYTES",
    "MAX_YAML_ALIASES",
    "MAX_YAML_ALIAS_NODES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "PlanSource",
    "YamlLimitError",
    "load_source",
    "load_yaml",
    "parse_source",
    "resolve_plan_file",
]

MAX_PLAN_BYTES = 2 * 1024 * 1024
PLAN_FILE = UserFile(
    "Plan ファイル {file} が見つかりません。",
    hint="パスを確認してください。designs/ 配下の Plan は `ls designs` で一覧できます。",
    unreadable="Plan ファイル {file} を読めません",
)
PLAN_SUFFIXES = (".yaml", ".yml")


@dataclass
class PlanSource:
    """A plan as written: the raw mapping, its text and where each YAML path starts."""

    raw: Any
    text: str
    file: str | None = None
    positions: dict[Loc, tuple[int, int]] = field(default_factory=dict)
    syntax_error: PlanIssue | None = None

    def position(self, loc: Loc) -> tuple[int | None, int | None]:
        """Line and column (1-based) of ``loc``, or of its nearest located ancestor."""
        current = tuple(loc)
        while True:
            found = self.positions.get(current)
            if found is not None:
                return found
            if not current:
                return None, None
            current = current[:-1]


def parse_source(text: str, *, file: str | None = None) -> PlanSource:
    """Parse plan YAML; a syntax error becomes ``syntax_error`` (never an exception)."""
    positions: dict[Loc, tuple[int, int]] = {}
    try:
        raw = read_yaml(text, positions)
    except YamlLimitError as exc:
        mark = exc.problem_mark
        issue = PlanIssue(
            code=IssueCode.YAML_LIMIT,
            message=f"YAML を展開できません: {exc.problem}",
            line=mark.line + 1 if mark is not None else None,
            column=mark.column + 1 if mark is not None else None,
            hint=LIMIT_HINT,
            file=file,
        )
        return PlanSource(raw=None, text=text, file=file, syntax_error=issue)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        issue = PlanIssue(
            code=IssueCode.YAML_SYNTAX,
            message=f"YAML として解釈できません: {yaml_problem(exc)}",
            line=line,
            column=column,
            hint="インデント、コロンの後の空白、引用符の閉じ忘れを確認してください。"
            " `${...}` で始まる値は引用符で囲むと安全です。",
            file=file,
        )
        return PlanSource(raw=None, text=text, file=file, syntax_error=issue)
    return PlanSource(raw=raw, text=text, file=file, positions=positions)


def load_source(path: Path | str) -> PlanSource:
    """Read a plan file (BlockError when it cannot be read at all)."""
    file = Path(path)
    with PLAN_FILE.reading(file):
        size = file.stat().st_size
        if size > MAX_PLAN_BYTES:
            raise BlockError(
                f"Plan ファイル {file} が大きすぎます（{size} バイト）。",
                code=ErrorCode.FILE_TOO_LARGE,
                hint=f"{MAX_PLAN_BYTES // 1024 // 1024} MB 以下にしてください。"
                " 大きなデータは Plan に埋め込まずファイルで渡してください。",
                details={"file": str(file), "size": size},
            )
        text = file.read_text(encoding="utf-8")
    return parse_source(text, file=str(file))


def resolve_plan_file(plan_id: str, designs_dir: Path) -> Path | None:
    """``common/validation_flow`` → ``designs/common/validation_flow.yaml`` (None if absent)."""
    base = designs_dir.resolve()
    for suffix in PLAN_SUFFIXES:
        candidate = (base / f"{plan_id}{suffix}").resolve()
        if candidate.is_relative_to(base) and candidate.is_file():
            return candidate
    return None
