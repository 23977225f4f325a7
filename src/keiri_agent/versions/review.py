"""Who may approve a plan version, whether a run needs an approved one, and the one refusal.

The rules, the same through the CLI, the API and the app:

- **Who reviews.** With a users file (``KEIRI_API_KEYS_FILE``), only users whose role is
  ``approver`` may approve or reject; the CLI acts as the user of ``KEIRI_USER_KEY``, the API as
  the key's user, the app as the signed-in user. Without a users file (one person) the reviewer
  is the OS user of the CLI or the app; the API refuses reviews without keys (nobody is known).
- **Four eyes.** Nobody approves a version they saved themselves, unless
  ``KEIRI_ALLOW_SELF_APPROVAL`` is on (a team of one); such an approval is recorded as
  ``self_approved``. Rejecting (or withdrawing) one's own version is always allowed.
- **What was reviewed.** An approval names its version by something that does not move (``v3``,
  a hash): ``latest`` and ``approved`` are refused, since a version saved while the reviewer
  read would be approved unread. A rejection may name them (refusing more is never a risk).
- **Runs.** With ``KEIRI_REQUIRE_APPROVAL`` on (``auto``: on once the users file names an
  approver), a run of a plan text (and of every subflow it calls) whose version is not approved
  now is refused with :func:`unapproved_error` by the plan runner itself, so ``plan run``, the
  実行 page and the API give the same error, naming the version and who can approve it.
- **Runs that start by themselves.** A schedule or a trigger runs a saved version
  (``latest-approved``: :func:`approved_text`); the subflows it calls, at any depth, are saved
  versions too, found and held to the plan version's standing by
  ``keiri_agent.plan._graph.saved``; one with none to run is refused with
  :func:`no_approved_error`, naming it and who can approve it (as is a plan with none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode, input_error
from keiri_agent.users import User, Users, load_users, os_user
from keiri_agent.versions.store import MOVING_REFS, STATUS_LABELS, Version, VersionStore

__all__ = [
    "Reviewer",
    "RunVersion",
    "approval_required",
    "approved_text",
    "approvers_for",
    "check_run",
    "no_approved_error",
    "review",
    "reviewer_for",
    "unapproved_error",
]


@dataclass(frozen=True)
class Reviewer:
    """Who is reviewing, and whether their role lets them (always, without a users file)."""

    name: str
    may_review: bool
    role: str | None = None  # the users file's role; None without a users file


def reviewer_for(users: Users, user: User | None) -> Reviewer:
    """The reviewer a caller is: ``user`` (a users file is set: it must be given), else the
    OS user (one person, no users file)."""
    if users:
        if user is None:
            raise BlockError(
                "承認・却下には利用者の確認が必要です（キーが指定されていません）。",
                code=ErrorCode.PERMISSION_DENIED,
                hint="CLI では KEIRI_USER_KEY に自分の API キーを設定してください"
                "（アプリではサインイン、API では Authorization: Bearer <キー>）。",
            )
        return Reviewer(user.name, user.approver, user.role)
    return Reviewer(os_user(), True)


def approval_required(settings: Settings, users: Users | None = None) -> bool:
    """Whether only approved versions may run (``KEIRI_REQUIRE_APPROVAL``; ``auto``: when the
    users file names an approver)."""
    if settings.keiri_require_approval != "auto":
        return settings.keiri_require_approval == "on"
    known = users if users is not None else load_users(settings)
    return bool(known.approvers())


def approvers_for(author: str | None, users: Users, settings: Settings) -> list[str]:
    """The names of the users who may approve a version ``author`` saved (empty without a
    users file: any person other than the author, by the CLI or the app)."""
    names = users.approvers()
    if author is not None and not settings.keiri_allow_self_approval:
        names = [name for name in names if name != author]
    return names


def _who_can(author: str | None, users: Users, settings: Settings) -> str:
    if users:
        names = approvers_for(author, users, settings)
        if not names:
            return "承認できる利用者がいません（利用者ファイルに role: approver の利用者を加えてください）"
        return "承認できる人: " + "、".join(names)
    if settings.keiri_allow_self_approval:
        return "承認できる人: この環境の利用者（自己承認が許可されています）"
    who = f"作成者（{author}）以外" if author else "作成者以外"
    return f"承認できる人: {who}の人（CLI またはアプリで承認します）"


def _approve_line(plan_id: str, ref: str) -> str:
    """How to approve version ``ref`` of ``plan_id``, said the same by both refusals."""
    return f"承認: keiri-agent plan approve {plan_id} {ref}（設計ページの「承認」、API の承認でも同じ）。"


def _approval_refusal(
    message: str,
    before: str,
    approve: str,
    version: Version | None,
    users: Users,
    settings: Settings,
    details: dict[str, Any],
) -> BlockError:
    """A run refused for want of an approved ``version`` (None: none saved), the same in both
    refusals: the hint says ``before``, who may approve it and how (``approve``); the details
    add its status and the names of those who may approve it."""
    author = version.author if version is not None else None
    return BlockError(
        message,
        code=ErrorCode.APPROVAL_REQUIRED,
        hint=f"{before}{_who_can(author, users, settings)}。{approve}",
        details={
            **details,
            "status": version.status if version is not None else "unsaved",
            "approvers": approvers_for(author, users, settings),
        },
    )


def unapproved_error(
    plan_id: str, vid: str, version: Version | None, users: Users, settings: Settings
) -> BlockError:
    """The refusal of a run whose plan version is not approved (one error everywhere)."""
    short = vid[:12]
    if version is None:
        state = "版として登録されていません"
        first = "先に版として登録してください（keiri-agent plan save FILE、または設計ページの「登録」）。"
    else:
        state = STATUS_LABELS[version.status]
        last = version.decisions[-1] if version.decisions else None
        if last is not None and last.kind == "reject":
            state += f"（{last.by}）"
        first = ""
    return _approval_refusal(
        f"Plan {plan_id} の版 {short} は承認されていないため実行できません（{state}）。",
        first,
        _approve_line(plan_id, short),
        version,
        users,
        settings,
        {"plan_id": plan_id, "version": vid},
    )


def no_approved_error(
    plan_id: str,
    versions: Sequence[Version],
    settings: Settings,
    *,
    call: str | None = None,
    approved: bool = True,
) -> BlockError:
    """The refusal of a schedule's or a trigger's start when ``plan_id`` (the plan it runs, or
    the plan a subflow ``call`` names) has no version to run among ``versions`` (all of its):
    no approved one, or (``approved`` false: approval is not required and the plan version is
    not approved) none saved."""
    users = load_users(settings)
    latest = versions[-1] if versions else None
    name = call if call is not None else plan_id
    looked = f"（Plan の id {plan_id} の版を探しました）" if call not in (None, plan_id) else ""
    if latest is None:
        state = "版として登録されていません"
        first = (
            f"先に版として登録してください（keiri-agent plan save designs/{name}.yaml、"
            f"または設計ページの「登録」）{looked}。"
        )
        approve = f"登録した版を承認します（keiri-agent plan approve {plan_id} v1 など）。"
    else:
        state = f"最新の版 {latest.label} は{STATUS_LABELS[latest.status]}"
        first = looked
        approve = _approve_line(plan_id, f"v{latest.number}")
    what = "サブフロー" if call is not None else "Plan"
    if call is not None and not approved:  # approval off, a plan version nobody approved
        return BlockError(
            f"サブフロー {name} には登録された版がないため、予定・トリガーの実行を始められません"
            f"（{state}）。",
            code=ErrorCode.DEPENDENCY_NOT_FOUND,
            hint="予定・トリガーの実行は、呼び出すサブフローも登録された版を使います"
            f"（作業コピーは使いません）。{first}",
            details={"plan_id": plan_id, "call": name, "subflow": True, "status": "unsaved"},
        )
    why = (
        "予定・トリガーの実行は、承認が必要な環境か承認済みの版を実行するとき、呼び出すサブフローも"
        "承認済みの版を使います（作業コピーは使いません）。"
        if call is not None
        else ""
    )
    return _approval_refusal(
        f"{what} {name} には承認済みの版がないため、予定・トリガーの実行を始められません"
        f"（{state}）。",
        f"{why}{first}",
        approve,
        latest,
        users,
        settings,
        {"plan_id": plan_id, "call": name, "subflow": call is not None},
    )


def approved_text(settings: Settings, plan_id: str) -> tuple[Version, str]:
    """The newest approved version of ``plan_id`` and its text (checked against its hash);
    :func:`no_approved_error` when none is approved."""
    store = VersionStore.of(settings)
    versions = store.versions(plan_id)
    approved = [v for v in versions if v.status == "approved"]
    if not approved:
        raise no_approved_error(plan_id, versions, settings)
    return approved[-1], store.text(approved[-1])


def review(
    store: VersionStore,
    plan_id: str,
    ref: str,
    decision: Literal["approve", "reject"],
    reviewer: Reviewer,
    settings: Settings,
    *,
    comment: str = "",
) -> Version:
    """Approve or reject the version ``ref`` names, by the rules of the module docstring."""
    version = store.find(plan_id, ref)
    if decision == "approve" and ref.strip().lower() in MOVING_REFS:
        raise input_error(
            f"承認する版は v番号かハッシュで指定してください（「{ref.strip()}」は、確認している間に"
            "新しい版が登録されると、確認していない版を指してしまいます）。",
            f"いま「{ref.strip()}」に当たるのは {version.label} です。内容を確かめてから"
            f"keiri-agent plan approve {plan_id} v{version.number} のように指定してください。",
            plan_id=plan_id,
            ref=ref,
            version=version.id,
        )
    verb = "承認" if decision == "approve" else "却下"
    if not reviewer.may_review:
        raise BlockError(
            f"{reviewer.name} さん（role: {reviewer.role}）は版を{verb}できません。",
            code=ErrorCode.PERMISSION_DENIED,
            hint="承認・却下できるのは利用者ファイルで role: approver の利用者だけです。",
            details={"user": reviewer.name, "role": reviewer.role},
        )
    own = version.author == reviewer.name
    if decision == "approve" and own and not settings.keiri_allow_self_approval:
        raise BlockError(
            f"版 {version.label} は {reviewer.name} さん自身が登録した版なので承認できません"
            "（作成者以外の承認が必要です）。",
            code=ErrorCode.PERMISSION_DENIED,
            hint="ほかの承認者に依頼してください。一人で運用する場合だけ"
            " KEIRI_ALLOW_SELF_APPROVAL=true で自己承認を許可できます（自己承認として記録されます）。",
            details={"plan_id": plan_id, "version": version.id, "author": version.author},
        )
    return store.decide(
        plan_id,
        version.id,
        decision,
        by=reviewer.name,
        comment=comment,
        self_approved=decision == "approve" and own,
    )


@dataclass(frozen=True)
class RunVersion:
    """The version of one plan text a run executes, and its approval when it starts."""

    plan_id: str
    version: str  # the text's hash, saved as a version or not
    number: int | None  # its number among the plan's versions (None: never saved)
    approval: dict[str, Any] | None  # Decision.to_dict() of the approval standing now

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_run(
    settings: Settings, plans: Sequence[tuple[str, str]], *, users: Users | None = None
) -> list[RunVersion]:
    """The versions of ``plans`` (``(plan id, text)``: the plan a run executes, then its
    subflows) with their approvals; :func:`unapproved_error` for the first one not approved
    when approval is required."""
    store = VersionStore.of(settings)
    known = users if users is not None else load_users(settings)
    required = approval_required(settings, known)
    found: list[RunVersion] = []
    for plan_id, text in plans:
        vid, version = store.of_text(plan_id, text)
        approval = version.approval if version is not None else None
        if required and approval is None:
            raise unapproved_error(plan_id, vid, version, known, settings)
        found.append(
            RunVersion(
                plan_id,
                vid,
                version.number if version is not None else None,
                approval.to_dict() if approval is not None else None,
            )
        )
    return found
