"""The learned payer names: a CSV under the workspace that keeps what people confirmed, once
per payer and customer, safe when two runs learn at once, exported and imported as CSV."""

from __future__ import annotations

import csv
import datetime as dt
import io
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.table.payments.learned import STORE_COLUMNS, LearnedName, LearnedNames
from keiri_agent.config import Settings
from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.file_access import FileAccess
from tests.blocks.conftest import run_like_runner
from tests.blocks.payments_support import context

NOW = dt.datetime(2026, 2, 27, 9, 0, tzinfo=dt.UTC)


def rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))


def test_names_are_kept_once_per_payer_and_customer_with_who_and_when(tmp_path: Path) -> None:
    store = LearnedNames(tmp_path / "store" / "names.csv")
    first = store.add(
        [LearnedName("ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "1001", "株式会社山田商事")], who="経理 花子", now=NOW
    )
    again = store.add(
        [
            LearnedName("ﾔﾏﾄﾎｰﾙﾃﾞｲﾝｸﾞｽ(ｶ", "1001"),  # the same name as another bank writes it
            LearnedName("ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "1002"),  # the parent pays for a second customer
        ],
        who="経理 太郎",
        now=NOW,
    )
    assert (len(first.added), len(again.added), len(again.known), again.total) == (1, 1, 1, 2)
    assert rows(store.path) == [
        dict(
            zip(
                STORE_COLUMNS,
                [
                    "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ",
                    "1001",
                    "株式会社山田商事",
                    "経理 花子",
                    "2026-02-27T09:00:00+00:00",
                ],
                strict=True,
            )
        ),
        dict(
            zip(
                STORE_COLUMNS,
                ["ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "1002", "", "経理 太郎", "2026-02-27T09:00:00+00:00"],
                strict=True,
            )
        ),
    ]
    assert store.path.read_bytes().startswith(b"\xef\xbb\xbf")  # Excel opens it as UTF-8
    # The store and its lock only: no temporary file is left behind.
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["names.csv", "names.csv.lock"]


def test_two_runs_learning_at_once_both_keep_what_they_learned(tmp_path: Path) -> None:
    store_path = tmp_path / "names.csv"
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def learn(number: int) -> None:
        try:
            start.wait(timeout=60)
            LearnedNames(store_path).add(
                [LearnedName(f"ｶ)ﾃｽﾄｼﾖｳｼﾞ{chr(0xFF71 + number)}", str(2000 + number))],
                who=f"run {number}",
            )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=learn, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert sorted(r["取引先コード"] for r in rows(store_path)) == [str(2000 + n) for n in range(8)]


def test_export_and_import_as_csv_shift_jis_included(tmp_path: Path) -> None:
    store = LearnedNames(tmp_path / "store" / "names.csv")
    store.add([LearnedName("ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "1002", "青葉商事株式会社")], who="a", now=NOW)
    exported = tmp_path / "export.csv"
    assert store.export_csv(exported) == 1
    assert rows(exported)[0]["振込依頼人名"] == "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ"

    from_excel = tmp_path / "from_excel.csv"
    from_excel.write_bytes("振込依頼人名,取引先コード\r\nﾎｸﾄｳｳﾝﾕ(ｶ,1003\r\n,\r\n".encode("cp932"))
    imported = store.import_csv(from_excel, who="取り込み")
    assert [n.payer for n in imported.added] == ["ﾎｸﾄｳｳﾝﾕ(ｶ"]
    assert [n.code for n in store.read()] == ["1002", "1003"]


def test_a_store_without_its_columns_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "names.csv"
    path.write_text("名義,コード\nｶ)ｱｵﾊﾞ,1002\n", encoding="utf-8")
    with pytest.raises(BlockError) as caught:
        LearnedNames(path).read()
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert caught.value.message == (
        "学習済みの名義のファイル「names.csv」: 1 行目に列 振込依頼人名・取引先コード がありません"
        "（見出し: 名義、コード）。"
    )
    path.write_text("振込依頼人名,取引先コード\nｶ)ｱｵﾊﾞ,\n", encoding="utf-8")
    with pytest.raises(BlockError, match="2 行目の振込依頼人名か取引先コードが空欄です"):
        LearnedNames(path).read()


def test_the_store_lives_under_the_workspace_unless_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert Settings(keiri_workspace_root=tmp_path).learned_payer_names_path() == (
        tmp_path / "learned_payer_names.csv"
    )
    monkeypatch.setenv("KEIRI_LEARNED_PAYER_NAMES", str(tmp_path / "shared" / "名義.csv"))
    assert Settings().learned_payer_names_path() == tmp_path / "shared" / "名義.csv"


def test_the_block_refuses_a_row_without_a_code_and_writes_nothing(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    block = registry.load("table.learn_payer_names")
    names = [
        {"振込依頼人名": "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ", "取引先コード": "1002"},
        {"振込依頼人名": "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "取引先コード": ""},
    ]
    with pytest.raises(BlockError) as caught:
        run_like_runner(block, {"names": names}, context(tmp_path, "learn"))
    assert caught.value.message == "names の 1 行に振込依頼人名か取引先コードがありません。"
    assert not (tmp_path / "learned_payer_names.csv").exists()

    empty = run_like_runner(block, {"names": []}, context(tmp_path, "learn"))
    assert empty["summary"]["added"] == 0
    assert not (tmp_path / "learned_payer_names.csv").exists()


def test_a_confined_run_changes_the_teams_names_only_as_its_editor(
    registry: BlockRegistry, tmp_path: Path
) -> None:
    block = registry.load("table.learn_payer_names")
    names = [{"振込依頼人名": "ｶ)ﾔﾏﾄﾎ-ﾙﾃﾞｲﾝｸﾞｽ", "取引先コード": "1001"}]
    store = tmp_path / "learned_payer_names.csv"
    confined = FileAccess.confined(search=(), writable=(tmp_path / "run",))
    # A server task of an ordinary user: refused, nothing written.
    with pytest.raises(BlockError) as caught:
        run_like_runner(block, {"names": names}, context(tmp_path, "learn", access=confined))
    assert caught.value.code == ErrorCode.PERMISSION_DENIED
    assert caught.value.message.startswith("学習済みの名義は経理チーム全員の処理に使われる")
    assert "承認者（approver）か管理者（admin）" in (caught.value.hint or "")
    assert not store.exists()
    # An approver's: recorded as the signed-in user, the typed name only beside it.
    editor = replace(confined, team_editor="tanaka")
    inputs = {"names": names, "who": "経理 花子"}
    out = run_like_runner(block, inputs, context(tmp_path, "learn", access=editor))
    assert out["added"][0]["登録者"] == "tanaka（経理 花子）"
    assert [r["登録者"] for r in rows(store)] == ["tanaka（経理 花子）"]
    # Nothing to learn needs no right to change anything.
    assert run_like_runner(block, {"names": []}, context(tmp_path, "learn", access=confined))
    # The operator's own run (CLI, app): unrestricted, 登録者 as typed.
    other = [{"振込依頼人名": "ｱｵﾊﾞｼﾖｳｼﾞ", "取引先コード": "1002"}]
    out = run_like_runner(block, {"names": other, "who": "経理 花子"}, context(tmp_path, "learn"))
    assert out["added"][0]["登録者"] == "経理 花子"
