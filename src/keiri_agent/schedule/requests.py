"""What a person asks for when adding a schedule or a trigger, and the limits it must keep.

One parameter object per kind, the same for the CLI's options, the API's JSON body and the
app's 予定 form: :class:`ScheduleRequest` for :func:`~keiri_agent.schedule.add_schedule`,
:class:`TriggerRequest` for :func:`~keiri_agent.schedule.add_trigger`. The API validates its
body against them (a 422 with the fields); the CLI and the app build them with
:meth:`ScheduleRequest.of` / :meth:`TriggerRequest.of`, which refuse the same values with a
BlockError naming each wrong field in Japanese.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from keiri_agent.schedule.calendar import CalendarName
from keiri_agent.schedule.rules import Rule, read_fields
from keiri_agent.schedule.store import MAX_PLAN_ID_CHARS, Misfire, PlanId

__all__ = [
    "MAX_FILE_VAR_CHARS",
    "MAX_FOLDER_CHARS",
    "MAX_PIN_CHARS",
    "REQUEST_HINT",
    "ScheduleRequest",
    "TriggerRequest",
]

MAX_PIN_CHARS = 80  # latest-approved, working or a version's hash (64 hex digits) fit
MAX_FOLDER_CHARS = 1000  # a folder under the workspace root, as a relative path
MAX_FILE_VAR_CHARS = 100  # a var's name, not a value
REQUEST_HINT = (
    f"Plan の id は {MAX_PLAN_ID_CHARS} 文字まで、版は {MAX_PIN_CHARS} 文字まで、フォルダは"
    f" {MAX_FOLDER_CHARS} 文字まで、ファイルを渡す vars の名前は 1〜{MAX_FILE_VAR_CHARS} 文字です。"
)
_LABELS = {  # the fields as the CLI's options and the 予定 page name them
    "plan_id": "Plan の id",
    "calendar": "カレンダー",
    "vars": "vars",
    "version": "版",
    "misfire": "停止中に過ぎた実行",
    "kind": "種類",
    "folder": "フォルダ",
    "file_var": "ファイルを渡す vars の名前",
}


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    WHAT: ClassVar[str]

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Self:
        """The request ``raw`` describes, or INPUT_VALIDATION_FAILED naming each wrong field."""
        adapter = TypeAdapter(cls)
        return read_fields(adapter, raw, what=cls.WHAT, labels=_LABELS, hint=REQUEST_HINT)


class ScheduleRequest(_Request):
    """A new schedule: its plan, rule, calendar, vars, version pin and what a missed fire does."""

    WHAT: ClassVar[str] = "予定の指定"
    plan_id: PlanId
    rule: Rule
    calendar: CalendarName = "jp"
    vars: dict[str, Any] = Field(default_factory=dict)
    version: str | None = Field(default=None, max_length=MAX_PIN_CHARS)
    misfire: Misfire = "run_once"


class TriggerRequest(_Request):
    """A new trigger: webhook or watched folder, its plan, vars and version pin."""

    WHAT: ClassVar[str] = "トリガーの指定"
    kind: Literal["webhook", "folder"]
    plan_id: PlanId
    folder: str | None = Field(default=None, max_length=MAX_FOLDER_CHARS)
    file_var: str = Field(default="file", min_length=1, max_length=MAX_FILE_VAR_CHARS)
    vars: dict[str, Any] = Field(default_factory=dict)
    version: str | None = Field(default=None, max_length=MAX_PIN_CHARS)
