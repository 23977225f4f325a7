"""Near-miss questions: they reuse the manual's words but ask a point the manual does not cover.

The kind the help desk must refuse and the kind the lists have fewest of. Written for this data
set (x38), after reading the sample manual, release notes and qa.csv of examples/helpdesk (none of
the heldout4-6 lists was read). Each was checked against those texts: nothing there answers it.
Their top candidates become negatives (``manual_neg_nearmiss`` / ``eval_neg_nearmiss``).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from types import ModuleType

EVAL_DIR = Path(__file__).resolve().parents[2] / "examples" / "helpdesk_eval"

# examples/helpdesk (XYZシステム): every third one (index % 3 == 2) goes to dev.
XYZ_NEARMISS: tuple[str, ...] = (
    "海外出張の日当はいくらですか",
    "出張でグリーン車は使えますか",
    "出張の航空券はどのクラスまで精算できますか",
    "仮払金の上限額はいくらですか",
    "仮払金はいつ振り込まれますか",
    "経費精算で使える勘定科目の一覧はどこにありますか",
    "接待交際費の一人あたりの上限はいくらですか",
    "領収書をなくした場合はどうすればいいですか",
    "レシートの代わりにクレジットカードの利用明細で申請できますか",
    "パスワードに使える記号の種類を教えて",
    "パスワードの有効期限を延ばしてもらえますか",
    "社員番号を忘れたときはどうすればいいですか",
    "画面の表示言語を英語に切り替えられますか",
    "タブレットからも使えますか",
    "請求書を郵送で送ることはできますか",
    "請求書を英語で発行できますか",
    "外貨建ての請求書は作れますか",
    "請求書の支払期限は何日後に設定すればいいですか",
    "入金が遅れている取引先に督促状を出せますか",
    "CSV取込を毎晩自動で実行するように予約できますか",
    "仕訳データをCSVで取り込んだあとで取り消せますか",
    "帳票を毎月自動で上司にメール送信する設定はありますか",
    "出力したExcelの帳票にパスワードをかけられますか",
    "代理承認者を複数人設定できますか",
    "代理承認の期間は最長でどれくらい設定できますか",
    "スマホで複数の申請をまとめて一括承認できますか",
    "下書きの申請をほかの人に引き継げますか",
    "申請番号から申請した人を検索できますか",
    "退職した人が作った下書きはどうなりますか",
    "派遣社員もXYZシステムのアカウントを持てますか",
    "新入社員のアカウントはいつ発行されますか",
    "システム障害で締め日に申請できなかったときの補償はありますか",
    "APIキーは何個まで発行できますか",
    "ヘルプデスクの場所は何階ですか",
    "次のバージョン3.3はいつリリースされますか",
    "給与口座以外の口座に経費を振り込んでもらえますか",
    "定期券の払い戻しは精算できますか",
    "タクシー代は精算できますか",
    "深夜残業で帰るときのタクシー代の上限はいくらですか",
    "電子帳簿保存法の対象になる書類を教えてください",
    "ICカードの履歴は何か月前の分まで取り込めますか",
    "インボイスの登録番号が取り消された取引先への支払はどうすればいいですか",
    "軽減税率8%の対象になる品目を教えてください",
    "部門予算の残りはどこで確認できますか",
)

# examples/helpdesk_eval: topics no section covers (the manual has only the 10 topics of
# make_eval_set.TOPICS per procedure, and none of these words).
EVAL_TEMPLATES: tuple[str, ...] = (
    "{q}の手数料は誰が負担しますか",
    "{q}は英語の画面でも申請できますか",
    "{q}を部下の代わりに代理で申請できますか",
    "{q}の担当者の電話番号を教えて",
    "{q}の制度はいつから始まったの？",
    "{q}の税務上の扱いを教えてください",
    "{q}をスマホアプリから出せますか",
    "{q}は承認までに何日くらいかかりますか",
    "{q}の過去5年分の履歴を見たい",
    "{q}の研修はありますか",
)
EVAL_PER_PROCEDURE = 4
SEED = 3838


def make_eval_set() -> ModuleType:
    """examples/helpdesk_eval/make_eval_set.py (read only): its PROCEDURES and their facts."""
    sys.path.insert(0, str(EVAL_DIR))
    try:
        import make_eval_set as m  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    return m


def eval_nearmiss() -> list[tuple[str, str]]:
    """(procedure name, question): EVAL_PER_PROCEDURE templates per procedure, fixed seed."""
    m = make_eval_set()
    rng = random.Random(SEED)
    out = []
    for proc in m.PROCEDURES:
        spellings = (proc.name, *proc.variants)
        for t in rng.sample(EVAL_TEMPLATES, EVAL_PER_PROCEDURE):
            out.append((proc.name, t.format(q=rng.choice(spellings))))
    return out
