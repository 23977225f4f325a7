"""Write the larger help-desk evaluation set (``examples/helpdesk_eval/``) from the tables below.

The fictional ABC商事's back-office manual: 30 procedures (経費精算, 振込依頼, 仮払金 ...) × 10
topics each (how to apply, deadline, cancelling, duplicate requests, approval route, returned
requests, attachments, limits, corrections, error codes) = 300 passages in 6 Markdown files,
one ``###`` section per passage. Each procedure has its own facts (menu, deadline day, approvers,
limit, documents, error code), so two passages on the same topic differ in more than the name.

The questions (``questions.jsonl``) are written the way staff type them, not the way the manual
spells things: okurigana and kana spellings (振込 / 振り込み / ふりこみ), 取消 / とりけし, 二重申請 /
2回申請 / 二度出した, 〆日 / 締切, full- and half-width digits and letters, polite and casual
forms. Each names the file and the passage (the section heading) that answers it. A fixed seed
makes the output the same on every run.

    python examples/helpdesk_eval/make_eval_set.py            # rewrites examples/helpdesk_eval/
    python examples/helpdesk_eval/make_eval_set.py OUT_DIR    # writes somewhere else
"""

from __future__ import annotations

import json
import random
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PROCEDURES", "write_eval_set"]

HERE = Path(__file__).resolve().parent
SEED = 20
QUESTIONS_FILE = "questions.jsonl"


@dataclass(frozen=True)
class Procedure:
    name: str  # as the manual writes it
    variants: tuple[str, ...]  # as staff write it
    menu: str
    day: int  # deadline (day of month)
    approvers: tuple[str, str, str]
    limit: str  # yen
    document: str
    code: str
    cause: str
    dept: str


P = Procedure
PROCEDURES: tuple[Procedure, ...] = (
    P(
        "振込依頼",
        ("振り込み依頼", "ふりこみの依頼", "振込の依頼"),
        "支払",
        20,
        ("所属長", "経理課長", "経理部長"),
        "3,000,000",
        "請求書の写し",
        "E-3101",
        "振込先口座の支店コードが登録されていません",
        "経理課",
    ),
    P(
        "経費精算",
        ("経費の精算", "けいひ精算", "経費せいさん"),
        "経費",
        5,
        ("所属長", "経理担当", "部門長"),
        "100,000",
        "領収書",
        "E-2101",
        "利用日が締め済みの月になっています",
        "経理課",
    ),
    P(
        "仮払金",
        ("仮払い", "かりばらい", "仮払いのお金"),
        "経費",
        10,
        ("所属長", "経理課長", "部門長"),
        "500,000",
        "出張計画書",
        "E-2201",
        "未精算の仮払金が残っています",
        "経理課",
    ),
    P(
        "立替金",
        ("立て替えたお金", "立替え", "たてかえたお金"),
        "経費",
        5,
        ("所属長", "経理担当", "経理課長"),
        "200,000",
        "領収書の原本",
        "E-2301",
        "立替者の社員番号が見つかりません",
        "経理課",
    ),
    P(
        "交通費精算",
        ("交通費の精算", "電車代の精算", "こうつうひ精算"),
        "経費",
        5,
        ("所属長", "経理担当", "部門長"),
        "50,000",
        "経路の検索結果",
        "E-2401",
        "定期区間と重なる経路が含まれています",
        "総務課",
    ),
    P(
        "出張旅費",
        ("出張の旅費", "出張費", "しゅっちょう旅費"),
        "出張",
        15,
        ("所属長", "部門長", "役員"),
        "1,000,000",
        "出張報告書",
        "E-2501",
        "出張申請が承認されていません",
        "総務課",
    ),
    P(
        "請求書発行",
        ("請求書の発行", "せいきゅうしょ発行", "請求書の作成"),
        "請求",
        25,
        ("営業課長", "経理課長", "部門長"),
        "10,000,000",
        "受注書",
        "E-4101",
        "取引先の締め日が未設定です",
        "営業管理課",
    ),
    P(
        "支払申請",
        ("支払いの申請", "支払い申請", "しはらい申請"),
        "支払",
        20,
        ("所属長", "経理課長", "経理部長"),
        "5,000,000",
        "納品書と請求書",
        "E-3201",
        "支払予定日が銀行休業日です",
        "経理課",
    ),
    P(
        "見積書承認",
        ("見積もり書の承認", "見積りの承認", "みつもり承認"),
        "購買",
        28,
        ("所属長", "購買課長", "部門長"),
        "2,000,000",
        "相見積もりの一覧",
        "E-5101",
        "見積有効期限が過ぎています",
        "購買課",
    ),
    P(
        "領収書再発行",
        ("領収書の再発行", "りょうしゅうしょ再発行", "レシートの再発行"),
        "請求",
        25,
        ("営業課長", "経理担当", "経理課長"),
        "10,000,000",
        "再発行依頼書",
        "E-4201",
        "元の領収書番号が無効です",
        "経理課",
    ),
    P(
        "小口現金",
        ("小口の現金", "こぐち現金", "手元現金"),
        "経費",
        3,
        ("所属長", "経理担当", "経理課長"),
        "30,000",
        "出金伝票",
        "E-2601",
        "小口現金の残高が不足しています",
        "経理課",
    ),
    P(
        "固定資産登録",
        ("固定資産の登録", "こていしさん登録", "備品の資産登録"),
        "資産",
        10,
        ("所属長", "経理課長", "経理部長"),
        "10,000,000",
        "検収書",
        "E-6101",
        "耐用年数が勘定科目と合っていません",
        "経理課",
    ),
    P(
        "売掛金消込",
        ("売掛金の消し込み", "入金の消込", "うりかけ消し込み"),
        "入金",
        7,
        ("経理担当", "経理課長", "経理部長"),
        "100,000,000",
        "入金明細",
        "E-4301",
        "入金額と請求額が一致しません",
        "経理課",
    ),
    P(
        "買掛金計上",
        ("買掛の計上", "買い掛け金の計上", "かいかけ計上"),
        "支払",
        8,
        ("購買担当", "経理担当", "経理課長"),
        "50,000,000",
        "検収書",
        "E-3301",
        "仕入先コードが停止されています",
        "購買課",
    ),
    P(
        "源泉徴収",
        ("源泉税", "げんせん徴収", "源泉の天引き"),
        "支払",
        10,
        ("経理担当", "経理課長", "経理部長"),
        "5,000,000",
        "支払調書の控え",
        "E-3401",
        "報酬区分が選ばれていません",
        "経理課",
    ),
    P(
        "年末調整",
        ("ねんまつ調整", "年調", "年末の調整"),
        "給与",
        30,
        ("人事担当", "人事課長", "人事部長"),
        "1,000,000",
        "控除証明書",
        "E-7101",
        "扶養親族のマイナンバーが未入力です",
        "人事課",
    ),
    P(
        "給与振込口座変更",
        ("給料の振り込み口座の変更", "給与口座の変更", "きゅうよ口座変更"),
        "給与",
        15,
        ("本人", "人事担当", "人事課長"),
        "1,000,000",
        "通帳の写し",
        "E-7201",
        "口座名義がカナで入力されていません",
        "人事課",
    ),
    P(
        "法人カード利用報告",
        ("会社カードの利用報告", "コーポレートカードの報告", "ほうじんカード報告"),
        "経費",
        5,
        ("所属長", "経理担当", "経理課長"),
        "300,000",
        "利用明細",
        "E-2701",
        "カード明細の取込が終わっていません",
        "経理課",
    ),
    P(
        "稟議申請",
        ("りんぎ申請", "稟議書の申請", "稟議の申請"),
        "稟議",
        20,
        ("所属長", "部門長", "役員"),
        "30,000,000",
        "稟議書",
        "E-8101",
        "決裁区分が金額と合っていません",
        "総務課",
    ),
    P(
        "契約書押印申請",
        ("契約書のハンコ", "契約書の押印", "けいやくしょ押印"),
        "総務",
        20,
        ("所属長", "法務担当", "総務課長"),
        "50,000,000",
        "契約書の最終版",
        "E-8201",
        "法務確認が完了していません",
        "法務課",
    ),
    P(
        "前払費用",
        ("前払いの費用", "前払い費用", "まえばらい費用"),
        "支払",
        8,
        ("所属長", "経理担当", "経理課長"),
        "10,000,000",
        "契約書の写し",
        "E-3501",
        "費用配分の期間が入力されていません",
        "経理課",
    ),
    P(
        "取引先登録",
        ("取引先の登録", "とりひきさき登録", "新しい取引先の登録"),
        "取引先",
        25,
        ("所属長", "経理担当", "購買課長"),
        "20,000,000",
        "登記簿謄本の写し",
        "E-5201",
        "法人番号の桁数が誤っています",
        "購買課",
    ),
    P(
        "インボイス登録番号確認",
        ("適格請求書の登録番号の確認", "T番号の確認", "いんぼいす番号確認"),
        "取引先",
        25,
        ("経理担当", "経理課長", "経理部長"),
        "1,000,000",
        "登録通知書の写し",
        "E-5301",
        "登録番号が国税庁の公表サイトに見つかりません",
        "経理課",
    ),
    P(
        "電子帳簿保存",
        ("電子帳簿の保存", "電帳法の保存", "でんし帳簿保存"),
        "文書",
        10,
        ("経理担当", "経理課長", "情報システム課長"),
        "300,000",
        "スキャンした証憑",
        "E-9101",
        "タイムスタンプが付与されていません",
        "情報システム課",
    ),
    P(
        "預り金精算",
        ("預かり金の精算", "あずかり金精算", "預り金の清算"),
        "入金",
        10,
        ("経理担当", "経理課長", "経理部長"),
        "1,000,000",
        "預り証",
        "E-4401",
        "預り金の残高と一致しません",
        "経理課",
    ),
    P(
        "月次決算",
        ("月次の決算", "げつじ決算", "月の締め処理"),
        "決算",
        6,
        ("経理担当", "経理課長", "経理部長"),
        "10,000,000",
        "月次チェックリスト",
        "E-9201",
        "未承認の仕訳が残っています",
        "経理課",
    ),
    P(
        "予算申請",
        ("予算の申請", "よさん申請", "来期予算の申請"),
        "予算",
        15,
        ("所属長", "部門長", "経営企画課長"),
        "100,000,000",
        "予算計画書",
        "E-9301",
        "予算科目が閉鎖されています",
        "経営企画課",
    ),
    P(
        "接待交際費",
        ("接待費", "交際費の申請", "せったい交際費"),
        "経費",
        5,
        ("所属長", "部門長", "役員"),
        "100,000",
        "参加者名簿",
        "E-2801",
        "一人あたりの金額が社内基準を超えています",
        "経理課",
    ),
    P(
        "通勤定期代",
        ("通勤の定期代", "定期券代", "つうきん定期"),
        "経費",
        5,
        ("所属長", "総務担当", "総務課長"),
        "100,000",
        "定期券の写し",
        "E-2901",
        "住所変更の届出が承認されていません",
        "総務課",
    ),
    P(
        "返金処理",
        ("払い戻し", "払戻し", "へんきん処理"),
        "入金",
        20,
        ("営業課長", "経理担当", "経理課長"),
        "5,000,000",
        "返金依頼書",
        "E-4501",
        "元の入金が消込されていません",
        "経理課",
    ),
)

FILES = {
    "経費と出張.md": (
        "経費精算",
        "仮払金",
        "立替金",
        "交通費精算",
        "出張旅費",
        "小口現金",
        "法人カード利用報告",
        "接待交際費",
        "通勤定期代",
    ),
    "支払と購買.md": ("振込依頼", "支払申請", "見積書承認", "買掛金計上", "源泉徴収", "前払費用"),
    "請求と入金.md": ("請求書発行", "領収書再発行", "売掛金消込", "預り金精算", "返金処理"),
    "取引先と文書.md": ("取引先登録", "インボイス登録番号確認", "電子帳簿保存", "契約書押印申請"),
    "決算と予算.md": ("固定資産登録", "月次決算", "予算申請", "稟議申請"),
    "給与と人事.md": ("年末調整", "給与振込口座変更"),
}

# (section title, passage templates, question templates); {n}: the procedure as written in the
# manual, {q}: as staff write it. Each passage is one of two wordings (seeded per procedure).
TOPICS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "の申請方法",
        (
            "{n}は、XYZシステムの「{menu}」メニューにある「新規作成」から申請します。"
            "必要な項目を入力し、{document}を添付してから「提出」を押してください。"
            "提出すると{a1}に通知が届きます。",
            "{n}を申請するには、XYZシステムにログインし「{menu}」→「新規作成」を開きます。"
            "画面の案内に沿って入力し、{document}を添付して提出します。"
            "提出後は{a1}の承認待ちになります。",
        ),
        (
            "{q}はどこから申請すればいいですか",
            "{q}のやり方を教えてください",
            "{q}って何の画面から出すの？",
        ),
    ),
    (
        "の締め日",
        (
            "{n}の締め日は毎月{day}日です。締め日を過ぎて提出されたものは翌月分として処理します。"
            "締め日が休日の場合は前営業日が締め日になります。",
            "{n}は毎月{day}日締めです。{day}日を過ぎた提出は翌月の処理に回ります。"
            "休日に当たる月は、その前の営業日までに提出してください。",
        ),
        ("{q}の締切はいつですか", "{q}の〆日は何日？", "{q}はいつまでに出せばいい？"),
    ),
    (
        "の取消し",
        (
            "提出した{n}を取り消すには、申請一覧で対象を選んで「取消」を押します。"
            "すでに承認済みの場合は取消できないため、{dept}に連絡してください。",
            "{n}の取消しは、承認される前であれば申請一覧の「取消」ボタンから行えます。"
            "承認後に取り消したいときは{dept}へ依頼してください。",
        ),
        ("{q}をとりけしたい", "出した{q}をキャンセルするには？", "{q}を取り消したいです"),
    ),
    (
        "の二重申請",
        (
            "同じ内容の{n}を二重に申請してしまった場合は、後から提出したほうを取り下げてください。"
            "二重申請のまま承認されたときは、{dept}が確認のうえ差し戻します。",
            "{n}が二重申請になっていると、システムが重複の警告を表示します。"
            "誤って二重に提出したときは、新しいほうを取り下げてください。",
        ),
        (
            "{q}を2回申請してしまった",
            "間違えて{q}を２回出しちゃった",
            "同じ{q}を二度提出したらどうなる",
        ),
    ),
    (
        "の承認ルート",
        (
            "{n}は{a1}、{a2}の順に承認されます。金額が{limit}円を超える場合は{a3}の承認も必要です。",
            "{n}の承認者は、まず{a1}、次に{a2}です。{limit}円を超えるものは{a3}まで回ります。",
        ),
        ("{q}は誰が承認するの？", "{q}の承認者を知りたい", "{q}の承認の順番は？"),
    ),
    (
        "の差戻し",
        (
            "{n}が差し戻されたときは、コメント欄で{a1}の指摘を確認し、内容を直して再提出してください。"
            "差戻しのまま30日が過ぎると自動的に取り下げになります。",
            "差し戻された{n}は、申請一覧の「差戻し」タブに表示されます。"
            "コメントの指摘どおりに修正して、もう一度提出してください。",
        ),
        ("{q}がさしもどされた", "{q}が差し戻しになったらどうすればいい", "{q}が戻ってきました"),
    ),
    (
        "の添付書類",
        (
            "{n}には{document}の添付が必要です。紙の書類はスキャンしてPDFにし、"
            "1ファイル10MB以内で添付してください。",
            "{n}を提出するときは{document}を必ず添付します。"
            "原本は{dept}が3か月保管するので、提出後に送ってください。",
        ),
        ("{q}に何を添付すればいいですか", "{q}の必要書類は？", "{q}で添付するものを教えて"),
    ),
    (
        "の上限額",
        (
            "{n}の上限額は1件あたり{limit}円です。上限を超える場合は、事前に{a3}の承認を得てください。",
            "1件の{n}で扱える金額は{limit}円までです。それを超えるときは{a3}の事前承認が要ります。",
        ),
        ("{q}はいくらまでできる？", "{q}の限度額を教えてください", "{q}の上限はいくら"),
    ),
    (
        "の修正",
        (
            "承認前の{n}は、申請一覧から開いて「修正」を押すと内容を直せます。"
            "承認後に誤りが見つかった場合は、取消して新しく申請し直してください。",
            "{n}の内容を修正できるのは承認される前だけです。"
            "承認後の訂正は{dept}に連絡し、指示に従ってください。",
        ),
        ("{q}の内容をなおしたい", "{q}で金額を間違えた。修正できる？", "出した{q}を訂正したい"),
    ),
    (
        "のエラー",
        (
            "{n}の登録でエラー{code}が表示された場合、原因は「{cause}」です。"
            "内容を確認して登録し直し、解決しない場合は{dept}に問い合わせてください。",
            "エラー{code}は{n}の入力チェックで出るエラーで、{cause}ことを示します。"
            "入力を直しても続くときは{dept}へ連絡してください。",
        ),
        (
            "{q}で{code}が出た",
            "{q}の登録でエラー{wide_code}と表示される",
            "{q}のエラー{code}の直し方",
        ),
    ),
)


def _wide(text: str) -> str:
    """Full-width letters and digits (what some Japanese input methods produce)."""
    return "".join(
        chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else ("－" if c == "-" else c)
        for c in text
    )


def _facts(proc: Procedure) -> dict[str, str]:
    return {
        "n": proc.name,
        "menu": proc.menu,
        "day": str(proc.day),
        "a1": proc.approvers[0],
        "a2": proc.approvers[1],
        "a3": proc.approvers[2],
        "limit": proc.limit,
        "document": proc.document,
        "code": proc.code,
        "wide_code": _wide(proc.code),
        "cause": proc.cause,
        "dept": proc.dept,
    }


def heading(proc: Procedure, topic: int) -> str:
    return f"{proc.name}{TOPICS[topic][0]}"


def build() -> tuple[dict[str, str], list[dict[str, object]]]:
    """(file name → Markdown, question records)."""
    rng = random.Random(SEED)
    by_name = {p.name: p for p in PROCEDURES}
    files: dict[str, str] = {}
    questions: list[dict[str, object]] = []
    for file_name, names in FILES.items():
        lines = [f"# ABC商事 業務マニュアル: {file_name.removesuffix('.md')}", ""]
        for chapter, name in enumerate(names, start=1):
            proc = by_name[name]
            facts = _facts(proc)
            lines += [f"## {chapter}. {proc.name}", ""]
            for topic, (_, passages, asks) in enumerate(TOPICS):
                title = heading(proc, topic)
                lines += [f"### {chapter}.{topic + 1} {title}", ""]
                lines += [rng.choice(passages).format(**facts), ""]
                # Two questions per passage, each with another spelling of the procedure.
                spellings = rng.sample(proc.variants, k=2)
                templates = rng.sample(asks, k=2)
                for spelling, template in zip(spellings, templates, strict=True):
                    text = template.format(q=spelling, **facts)
                    if rng.random() < 0.15:
                        text = _wide(text)  # full-width digits and letters
                    questions.append(
                        {
                            "id": f"{proc.code.lower()}-{topic + 1}-{len(questions) + 1}",
                            "question": text,
                            "file": file_name,
                            "passage": title,
                        }
                    )
        files[file_name] = "\n".join(lines).rstrip() + "\n"
    return files, questions


def write_eval_set(out: Path) -> None:
    files, questions = build()
    manual = out / "manual"
    manual.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (manual / name).write_text(unicodedata.normalize("NFC", text), encoding="utf-8")
    with (out / QUESTIONS_FILE).open("w", encoding="utf-8", newline="\n") as handle:
        for record in questions:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write_eval_set(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
