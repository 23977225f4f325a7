"""``table.learn_payer_names``: remember the payer names a person confirmed in 入金消込.

Takes ``table.match_payments``'s ``learned`` output (振込依頼人名, 取引先コード, 取引先名: the
names of 要確認 lines a person answered with 「この名義を覚える」) and adds them to the
learned-names store (:mod:`.payments.learned`: ``KEIRI_LEARNED_PAYER_NAMES``, by default
``<KEIRI_WORKSPACE_ROOT>/learned_payer_names.csv``), stamped with who and when. Every later run
of ``table.match_payments`` reads the store and matches those payers with reason 学習済み.
The file is one for the whole team (everyone's matching reads it): a server task changes it only
when its user is an approver or admin (``FileAccess.edit_team_file``), and 登録者 is then that
signed-in user, not a name typed into ``who``.
A name already learned for the same customer is not added twice; nothing is written when
nothing is new, and a row without a payer or a code stops the block before anything is written.
"""

from __future__ import annotations

from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.table.payments.learned import LearnedName, LearnedNames
from keiri_agent.blocks.table.payments.tables import read_aliases
from keiri_agent.blocks.table.records import table_from
from keiri_agent.config import load_settings
from keiri_agent.errors import input_error

__all__ = ["LearnPayerNamesBlock"]


class LearnPayerNamesBlock(ProcessingBlock):
    """Adds ``names`` to the learned-names store; returns what was added."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _who(inputs.get("who"))

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        table = table_from(inputs.get("names"), field="names")
        names_by_code = (
            {
                str(r.get("取引先コード") or ""): str(r.get("取引先名") or "")
                for r in table.records()
            }
            if "取引先名" in table.columns
            else {}
        )
        pairs = read_aliases(table, None)
        if len(table) and len(pairs) != len(table):
            raise input_error(
                f"names の {len(table) - len(pairs)} 行に振込依頼人名か取引先コードがありません。",
                "table.match_payments の learned をそのまま渡してください（列 振込依頼人名・取引先コード）。",
                field="names",
            )
        store = LearnedNames((ctx.settings or load_settings()).learned_payer_names_path())
        names = [LearnedName(payer, code, names_by_code.get(code, "")) for payer, code in pairs]
        # One file for the team: on the server only an approver or admin changes it, as themselves.
        editor = ctx.access.edit_team_file("学習済みの名義", "names") if names else None
        typed = _who(inputs.get("who"))
        who = _recorded(editor, typed) or f"実行 {ctx.run_id}（{ctx.plan_id}）"
        stored = store.add(names, who=who) if names else None
        added = list(stored.added) if stored else []
        known = len(stored.known) if stored else 0
        total = stored.total if stored else len(store.read())
        ctx.log(
            f"振込依頼人名 {len(added):,} 件を学習しました（登録済み {known:,} 件、合計 {total:,} 件。"
            f"{store.path.name} に登録者「{who}」として記録）"
        )
        return {
            "added": [
                {
                    "振込依頼人名": n.payer,
                    "取引先コード": n.code,
                    "取引先名": n.name,
                    "登録者": n.who,
                    "登録日時": n.when,
                }
                for n in added
            ],
            "summary": {
                "added": len(added),
                "already_known": known,
                "total": total,
                "store": str(store.path),
            },
        }


def _recorded(editor: str | None, typed: str) -> str:
    """The 登録者 written to the file: the server's signed-in editor (with the name typed in
    ``who`` beside it when it says someone else), else the typed name."""
    if editor is None:
        return typed
    return editor if typed in ("", editor) else f"{editor}（{typed}）"


def _who(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise input_error(
            f"who は文字列で指定してください（指定: {value!r}）。",
            "who には確認した人の名前を書きます（省略すると実行 ID を記録します）。",
            field="who",
        )
    return value.strip()
