"""Bank statement lines whose 摘要 / 振込依頼人名 holds the bank's own words beside the payer.

Banks print, beside the payer's name, words of their own: the kind of transaction (ﾌﾘｺﾐ,
ﾃﾞﾝｼﾝ, ｶﾞｲﾀﾒ, ｿｳｷﾝ, ｺｳｻﾞﾌﾘｶｴ), a fee (ﾃｽｳﾘﾖｳ), a channel (ATM), salaries (ｷﾕｳﾖ, ｼﾖｳﾖ). They
stand before the name with a space, a full-width space or ``*``, glued to it
(``ﾌﾘｺﾐｲﾉｳｴﾏﾕﾐ``), or after it; some banks print them in full-width kana with small kana
(``テスウリョウ``), Internet banking exports in kanji (``振込 ｺﾝﾄﾞｳ ﾘﾖｳﾀ``). Payers are people (common surnames and given names in half-width kana,
small kana written large as banks do: ｼﾖｳﾀ) and companies (the 全銀協 法人略語 first or last:
``ｶ)ｱｵﾊﾞｼﾖｳｼﾞ``, ``ﾀﾅｶﾌﾞﾂｻﾝ(ｶ``). A :class:`MemoLine` is one printed line (date, memo, amount,
balance; space-, comma- or tab-separated) with where each part stands, for the properties of
personal-data masking; :func:`payer_field` is the payer field alone, for 入金消込.

Written apart from ``keiri_agent.bank_words``: its own spellings of the bank's words.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = [
    "COMPANIES",
    "GIVEN",
    "SURNAMES",
    "MemoLine",
    "Person",
    "memo_lines",
    "payer_field",
]

# (surname as banks print it, kanji) — the most common Japanese surnames.
SURNAMES = (
    ("ｻﾄｳ", "佐藤"), ("ｽｽﾞｷ", "鈴木"), ("ﾀｶﾊｼ", "高橋"), ("ﾀﾅｶ", "田中"), ("ﾜﾀﾅﾍﾞ", "渡辺"),
    ("ｲﾄｳ", "伊藤"), ("ﾔﾏﾓﾄ", "山本"), ("ﾅｶﾑﾗ", "中村"), ("ｺﾊﾞﾔｼ", "小林"), ("ｶﾄｳ", "加藤"),
    ("ﾖｼﾀﾞ", "吉田"), ("ﾔﾏﾀﾞ", "山田"), ("ｻｻｷ", "佐々木"), ("ﾔﾏｸﾞﾁ", "山口"), ("ﾏﾂﾓﾄ", "松本"),
    ("ｲﾉｳｴ", "井上"), ("ｷﾑﾗ", "木村"), ("ﾊﾔｼ", "林"), ("ｼﾐｽﾞ", "清水"), ("ﾔﾏｻﾞｷ", "山崎"),
    ("ﾓﾘ", "森"), ("ｱﾍﾞ", "阿部"), ("ｲｹﾀﾞ", "池田"), ("ﾊｼﾓﾄ", "橋本"), ("ﾔﾏｼﾀ", "山下"),
    ("ｲｼｶﾜ", "石川"), ("ﾅｶｼﾞﾏ", "中島"), ("ﾏｴﾀﾞ", "前田"), ("ﾌｼﾞﾀ", "藤田"), ("ｺﾞﾄｳ", "後藤"),
    ("ｵｶﾀﾞ", "岡田"), ("ﾊｾｶﾞﾜ", "長谷川"), ("ﾑﾗｶﾐ", "村上"), ("ｺﾝﾄﾞｳ", "近藤"), ("ｲｼｲ", "石井"),
    ("ｻｲﾄｳ", "斎藤"), ("ｻｶﾓﾄ", "坂本"), ("ｴﾝﾄﾞｳ", "遠藤"), ("ｱｵｷ", "青木"), ("ﾌｼﾞｲ", "藤井"),
    ("ﾆｼﾑﾗ", "西村"), ("ﾌｸﾀﾞ", "福田"), ("ｵｵﾀ", "太田"), ("ﾐｳﾗ", "三浦"), ("ﾌｼﾞﾜﾗ", "藤原"),
)  # fmt: skip
# (given name as banks print it — small kana written large —, kanji).
GIVEN = (
    ("ﾋﾛｼ", "浩"), ("ﾀｶｼ", "隆"), ("ﾏｺﾄ", "誠"), ("ｹﾝｲﾁ", "健一"), ("ﾀﾛｳ", "太郎"),
    ("ｲﾁﾛｳ", "一郎"), ("ｼﾖｳﾀ", "翔太"), ("ﾀﾞｲｽｹ", "大輔"), ("ﾕｳｷ", "悠希"), ("ｶｽﾞﾔ", "和也"),
    ("ﾋﾛｷ", "大樹"), ("ｹﾝｼﾞ", "健二"), ("ﾏｻﾙ", "勝"), ("ｵｻﾑ", "修"), ("ﾐﾉﾙ", "稔"),
    ("ﾂﾖｼ", "剛"), ("ﾕｳｽｹ", "雄介"), ("ﾘﾖｳﾀ", "亮太"), ("ｹｲｺ", "恵子"), ("ﾖｳｺ", "洋子"),
    ("ﾕｳｺ", "裕子"), ("ﾏﾕﾐ", "真由美"), ("ﾐﾎ", "美穂"), ("ﾒｸﾞﾐ", "恵"), ("ｱｷｺ", "明子"),
    ("ﾉﾘｺ", "典子"), ("ﾊﾅｺ", "花子"), ("ﾐﾖｺ", "美代子"), ("ｻﾁｺ", "幸子"), ("ﾄﾓｺ", "智子"),
    ("ﾅｵﾐ", "直美"), ("ﾐｻｷ", "美咲"), ("ﾅﾂﾐ", "夏美"), ("ｷﾖｳｺ", "京子"), ("ｼﾕﾝｽｹ", "俊介"),
)  # fmt: skip
# (as the master writes it, as the payer's bank writes it).
COMPANIES = (
    ("株式会社青葉商事", "ｶ)ｱｵﾊﾞｼﾖｳｼﾞ"),
    ("山田工業株式会社", "ﾔﾏﾀﾞｺｳｷﾞﾖｳ(ｶ"),
    ("有限会社星野商会", "ﾕ)ﾎｼﾉｼﾖｳｶｲ"),
    ("医療法人さくら会", "ｲ)ｻｸﾗｶｲ"),
    ("合同会社東京キャピタル", "ﾄﾞ)ﾄｳｷﾖｳｷﾔﾋﾟﾀﾙ"),
    ("社会福祉法人みどり会", "ﾌｸ)ﾐﾄﾞﾘｶｲ"),
    ("田中物産株式会社", "ﾀﾅｶﾌﾞﾂｻﾝ(ｶ"),
    ("株式会社鈴木建設", "ｶ)ｽｽﾞｷｹﾝｾﾂ"),
    ("株式会社北斗運輸", "ｶ)ﾎｸﾄｳﾝﾕ"),
    ("佐藤電機有限会社", "ｻﾄｳﾃﾞﾝｷ(ﾕ"),
)
# The bank's words, as banks print them: (before the name, glued before it, after it).
BEFORE = (
    "ﾌﾘｺﾐ", "ﾃﾞﾝｼﾝ", "ｶﾞｲﾀﾒ", "ｿｳｷﾝ", "ﾌﾘｶｴ", "ｺｳｻﾞﾌﾘｶｴ", "ATM", "ｷﾕｳﾖ", "ｼﾖｳﾖ",
    "フリコミ", "ﾌﾘｺﾐｷﾝ", "ﾃﾞﾝｼﾝﾌﾘｺﾐ", "振込", "給与", "送金", "振込入金",
)  # fmt: skip
GLUED = ("ﾌﾘｺﾐ", "ﾃﾞﾝｼﾝ", "ｶﾞｲﾀﾒ", "ｿｳｷﾝ", "ﾌﾘｶｴ", "ｷﾕｳﾖ", "ATM", "フリコミ", "振込", "給与")
AFTER = ("ﾃｽｳﾘﾖｳ", "ﾌﾘｺﾐ", "ﾌﾘｺﾐﾃｽｳﾘﾖｳ", "テスウリョウ", "ﾃｽｳﾘｮｳ", "振込手数料")
PLACES = ("before", "before_wide", "before_star", "glued", "after", "both")


@dataclass(frozen=True)
class Person:
    surname: tuple[str, str]
    given: tuple[str, str]

    @property
    def bank(self) -> str:
        return f"{self.surname[0]} {self.given[0]}"

    @property
    def kanji(self) -> str:
        return f"{self.surname[1]} {self.given[1]}"


@dataclass(frozen=True)
class MemoLine:
    text: str
    name: tuple[int, int]  # where the payer's name stands
    person: bool  # the payer is a person (else a company)
    words: tuple[tuple[int, int], ...]  # where the bank's words stand
    numbers: tuple[tuple[int, int], ...]  # the date, the amount and the balance
    place: str


def payer_field(payer: str, rng: random.Random, place: str) -> tuple[str, list[tuple[int, int]]]:
    """``payer`` with bank words put at ``place``; the field and where the words stand."""
    words: list[tuple[int, int]] = []
    text = ""
    if place in ("before", "before_wide", "before_star", "both"):
        word = rng.choice(BEFORE)
        gap = {"before_wide": "\u3000", "before_star": "*"}.get(place, " ")
        words.append((0, len(word)))
        text = word + gap
    elif place == "glued":
        word = rng.choice(GLUED)
        words.append((0, len(word)))
        text = word
    text += payer
    if place in ("after", "both"):
        word = rng.choice(AFTER)
        words.append((len(text) + 1, len(text) + 1 + len(word)))
        text += " " + word
    return text, words


def _person(rng: random.Random) -> Person:
    return Person(rng.choice(SURNAMES), rng.choice(GIVEN))


def memo_lines(seed: int, count: int) -> list[MemoLine]:
    """``count`` printed statement lines drawn from ``seed``."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        person = rng.random() < 0.7
        payer = _person(rng).bank if person else rng.choice(COMPANIES)[1]
        if person and rng.random() < 0.15:
            payer = payer.replace(" ", "")  # some banks print no space between the two
        place = rng.choice(PLACES)
        field, words = payer_field(payer, rng, place)
        name_start = words[0][1] + (1 if place.startswith("before") or place == "both" else 0)
        if place == "after":
            name_start = 0
        month, day = rng.randint(1, 12), rng.randint(1, 28)
        date = rng.choice(
            (f"2025/{month:02d}/{day:02d}", f"07-{month:02d}-{day:02d}", f"R7.{month}.{day}")
        )
        amount = f"{rng.randint(1, 999) * 1000 + rng.choice((0, 560, 440)):,}"
        balance = f"{rng.randint(100, 9999):,},{rng.randint(0, 999):03d}"
        sep = rng.choice((" ", ",", "\t", "  "))
        if sep == ",":
            amount, balance = amount.replace(",", ""), balance.replace(",", "")
        prefix = date + sep
        text = prefix + field + sep + amount + sep + balance
        base = len(prefix)
        after_field = base + len(field) + len(sep)
        lines.append(
            MemoLine(
                text=text,
                name=(base + name_start, base + name_start + len(payer)),
                person=person,
                words=tuple((base + s, base + e) for s, e in words),
                numbers=(
                    (0, len(date)),
                    (after_field, after_field + len(amount)),
                    (len(text) - len(balance), len(text)),
                ),
                place=place,
            )
        )
    return lines
