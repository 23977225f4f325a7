"""`keiri-agent plan save|versions|diff|approve|reject`: plans as controlled documents.

``plan save FILE`` keeps a plan file (the working copy under ``designs/``) as a version once it
validates; ``plan versions`` lists a plan's versions with their reviews; ``plan diff`` shows
what changed between two versions (or a version and a plan file) in terms of the plan;
``plan approve`` / ``plan reject`` review a version by the four-eyes rules of
``keiri_agent.versions.review`` (with a users file, as the user of ``KEIRI_USER_KEY``). Times
are shown in ``KEIRI_TIMEZONE``; ``--json`` keeps them in UTC. Exit codes: 0 done, 1 a plan
that does not validate (not saved), 2 user errors (an unknown version, a review the rules
refuse).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from keiri_agent.cli.common import echo_json, user_errors
from keiri_agent.cli.plan import JsonFlag, PlanFile, PlanId, plan_app, plan_invalid
from keiri_agent.errors import BlockError, ErrorCode

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from keiri_agent.versions import Version

__all__ = ["approve", "diff", "reject", "save", "version_line", "versions"]

Ref = Annotated[
    str,
    typer.Argument(
        metavar="VERSION",
        help="版: ハッシュの先頭 4 文字以上、v番号（v1、v2 など）、latest、approved。",
    ),
]
CommentOption = Annotated[
    str, typer.Option("--comment", "-c", help="承認・却下の理由やメモ（記録に残ります）。")
]


def version_line(version: Version, zone: ZoneInfo) -> str:
    """One version as ``plan versions`` lists it."""
    from keiri_agent.localtime import shown_time
    from keiri_agent.versions import STATUS_LABELS

    state = STATUS_LABELS[version.status]
    if version.decisions:
        last = version.decisions[-1]
        self_note = "・自己承認" if last.self_approved else ""
        state += f"（{last.by}{self_note}、{shown_time(last.at, zone)}）"
    saved = shown_time(version.saved_at, zone)
    text = f"v{version.number}  {version.short}  {saved}  {version.author}  {state}"
    return text + (f"  {version.message}" if version.message else "")


@plan_app.command("save")
def save(
    file: PlanFile,
    message: Annotated[
        str, typer.Option("--message", "-m", help="この版の説明（何をなぜ変えたか）。")
    ] = "",
    as_json: JsonFlag = False,
) -> None:
    """Plan ファイルを検証し、版として登録します（同じ内容なら既存の版を表示。検証エラーなら終了コード 1）。"""
    from keiri_agent.cli.identity import acting_name
    from keiri_agent.config import load_settings
    from keiri_agent.control.changes import save_version
    from keiri_agent.plan import PlanEnv, load_source
    from keiri_agent.versions import SaveNote

    with user_errors():
        settings = load_settings()
        author = acting_name(settings)
        text = load_source(file).text
        try:
            version, created = save_version(
                text,
                PlanEnv.of(settings=settings),
                SaveNote(author=author, source="cli", message=message, file=str(file.resolve())),
            )
        except BlockError as exc:
            if exc.code != ErrorCode.PLAN_INVALID:
                raise
            plan_invalid(exc, file, not_done="版として登録しませんでした", as_json=as_json)
    if as_json:
        echo_json({"created": created, "version": version.to_dict()})
        return
    if created:
        typer.echo(f"Plan {version.plan_id} の版 {version.label}を登録しました（{author}）。")
        typer.echo(f"承認: keiri-agent plan approve {version.plan_id} {version.short}")
    else:
        typer.echo(f"この内容は Plan {version.plan_id} の版 {version.label}として登録済みです。")


@plan_app.command("versions")
def versions(plan_id: PlanId, as_json: JsonFlag = False) -> None:
    """Plan の版の一覧（古い順）: 版番号・ハッシュ・登録日時・作成者・承認の状態・メッセージ。"""
    from keiri_agent.config import load_settings
    from keiri_agent.versions import VersionStore

    with user_errors():
        settings = load_settings()
        found = VersionStore.of(settings).versions(plan_id)
    if as_json:
        echo_json({"plan_id": plan_id, "versions": [v.to_dict() for v in found]})
        return
    if not found:
        typer.echo(
            f"Plan {plan_id} には登録された版がありません"
            "（keiri-agent plan save FILE で登録します）。"
        )
        return
    typer.echo(f"Plan {plan_id} の版（{len(found)} 個、古い順）:")
    for version in found:
        typer.echo(version_line(version, settings.keiri_timezone))


@plan_app.command("diff")
def diff(
    plan_id: PlanId,
    old: Annotated[
        str,
        typer.Argument(
            metavar="FROM",
            help="比べる元の版（v1・ハッシュの先頭・latest・approved）か Plan ファイル。",
        ),
    ],
    new: Annotated[str, typer.Argument(metavar="TO", help="比べる先の版か Plan ファイル。")],
    as_json: JsonFlag = False,
) -> None:
    """2 つの版の違いを Plan の言葉で表示します（ノードの追加・削除・移動、入力・条件・ループ・ブロックの版・ポリシー・設定値の変更前後）。"""
    from keiri_agent.config import load_settings
    from keiri_agent.control.changes import compare

    with user_errors():
        found = compare(load_settings(), plan_id, old, new)
    if as_json:
        sides = {
            "from": {"label": found.old.label, "version": _id(found.old.version)},
            "to": {"label": found.new.label, "version": _id(found.new.version)},
        }
        echo_json({"plan_id": plan_id, **sides, **found.diff.to_dict()})
        return
    typer.echo(f"Plan {plan_id}: {found.old.label} → {found.new.label}")
    if found.diff.empty:
        typer.echo("Plan としての違いはありません（書式・コメント・キーの順序だけの違いです）。")
        return
    for line in found.diff.lines():
        typer.echo(line)


def _id(version: Version | None) -> str | None:
    return version.id if version is not None else None


def _review(plan_id: str, ref: str, decision: str, comment: str, as_json: bool) -> None:
    from keiri_agent.cli.identity import acting_user
    from keiri_agent.config import load_settings
    from keiri_agent.versions import STATUS_LABELS, VersionStore, review, reviewer_for

    with user_errors():
        settings = load_settings()
        users, user = acting_user(settings)
        reviewer = reviewer_for(users, user)
        version = review(
            VersionStore.of(settings),
            plan_id,
            ref,
            "approve" if decision == "approve" else "reject",
            reviewer,
            settings,
            comment=comment,
        )
    if as_json:
        echo_json({"version": version.to_dict()})
        return
    last = version.decisions[-1]
    note = "（自己承認として記録しました）" if last.self_approved else ""
    typer.echo(
        f"Plan {plan_id} の版 {version.label}を{STATUS_LABELS[version.status]}にしました"
        f"（{reviewer.name}）{note}。"
    )


@plan_app.command("approve")
def approve(
    plan_id: PlanId, version: Ref, comment: CommentOption = "", as_json: JsonFlag = False
) -> None:
    """版を承認します（承認者の役割が必要。自分が登録した版は承認できません）。"""
    _review(plan_id, version, "approve", comment, as_json)


@plan_app.command("reject")
def reject(
    plan_id: PlanId, version: Ref, comment: CommentOption = "", as_json: JsonFlag = False
) -> None:
    """版を却下します（承認済みの版の承認の取り消しにも使います）。"""
    _review(plan_id, version, "reject", comment, as_json)
