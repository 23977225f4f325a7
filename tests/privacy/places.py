"""Place names that are surnames too, in texts about places and in texts about people.

石川, 長野, 福井, 松本 are prefectures or cities and surnames both, and Sudachi tags them by
context: 「地域別売上（石川・富山）」 reads 石川 as a surname. In a list after a word about places
(地域別, 県別, エリア, 支店, 営業所, 拠点, 所在地...) or in a column headed by one, they are places
and must reach the model; beside an honorific, a title, a given name or a word about people
(担当: 石川, 石川様, 石川 太郎, 担当者別（石川・山田）) they are people and must not.

:func:`make_docs` gives both kinds, seeded: each :class:`PlaceDoc` says which places must stay
(``places``) and which people must be masked (``people``).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

__all__ = ["AMBIGUOUS", "PlaceDoc", "make_docs", "make_page_lists"]

# Prefectures and cities the dictionary knows as surnames too.
AMBIGUOUS = [
    "石川",
    "長野",
    "福井",
    "富山",
    "宮崎",
    "岡山",
    "広島",
    "千葉",
    "秋田",
    "福島",
    "熊本",
    "長崎",
    "青森",
    "岩手",
    "佐賀",
    "香川",
    "徳島",
    "金沢",
    "高松",
    "松本",
    "松山",
    "岡崎",
    "福岡",
    "前橋",
    "高崎",
]
# Places that are no surnames (regions, prefectures, cities with their suffix).
PLAIN = [
    "北海道",
    "東北",
    "関東",
    "北陸",
    "九州",
    "新潟",
    "静岡",
    "岐阜",
    "松本市",
    "金沢市",
    "札幌",
]
GIVEN = ["太郎", "花子", "浩二", "美咲", "健太", "由美", "翔太", "恵子"]
HONORIFICS = ["様", "さん", " 様", "さま", "氏"]
TITLES = ["部長", "課長", "支店長"]
# Words about places before a list: (label, opener).
LABELS = [
    ("地域別売上", "（"),
    ("地域別", "（"),
    ("県別売上", ": "),
    ("都道府県別の件数", "："),
    ("エリア", ": "),
    ("営業エリア", "："),
    ("支店", ": "),
    ("支店別実績", "（"),
    ("営業所", "："),
    ("拠点一覧", ": "),
    ("所在地", ": "),
    ("出荷先の地域", "："),
    ("地方別", "（"),
    ("事業所", " "),
    ("担当地域", ": "),
    ("担当エリア", "："),
    ("北陸", "（"),
]
PLACE_HEADERS = ["地域", "都道府県", "支店", "営業所", "拠点", "エリア", "所在地"]
BREAKS = ["・", "、", ", ", "／"]
CLOSERS = {"（": "）"}


@dataclass
class PlaceDoc:
    shape: str
    text: str
    places: list[str] = field(default_factory=list)
    people: list[str] = field(default_factory=list)


def _places(rng: random.Random, n: int) -> list[str]:
    pool = AMBIGUOUS + PLAIN
    chosen = rng.sample(AMBIGUOUS, 1) + rng.sample(pool, n - 1)
    rng.shuffle(chosen)
    return list(dict.fromkeys(chosen))


def _place_list(rng: random.Random) -> PlaceDoc:
    label, opener = rng.choice(LABELS)
    items = _places(rng, rng.randint(1, 4))
    listed = rng.choice(BREAKS).join(items)
    text = f"{label}{opener}{listed}{CLOSERS.get(opener, '')}"
    tail = rng.choice(
        ["", "の売上を比べてください。", "\n前年比で並べてください。", "　合計 1,200,000円"]
    )
    return PlaceDoc("place list", text + tail, places=items)


def _places_before_word(rng: random.Random) -> PlaceDoc:
    """Places listed before the word about them (石川・富山・福井の3県, 石川と富山の支店)."""
    items = _places(rng, rng.randint(2, 3))
    joined = rng.choice(["・", "、", "と"]).join(items)
    tail = rng.choice([f"の{len(items)}県の売上", "エリアの実績", "の支店で比べる", "の各営業所"])
    return PlaceDoc("places before a word", f"今期は{joined}{tail}です。", places=items)


def _place_table(rng: random.Random) -> PlaceDoc:
    header = rng.choice([*PLACE_HEADERS, "担当地域", "支店名"])
    delimiter = rng.choice([",", "\t", " | "])
    items = _places(rng, rng.randint(2, 5))
    rows = [delimiter.join([header, "売上", "件数"])]
    rows += [
        delimiter.join([item, str(rng.randint(100, 9999) * 100), str(rng.randint(1, 40))])
        for item in items
    ]
    if delimiter == " | ":
        rows = [f"| {row} |" for row in rows]
        rows.insert(1, "|---|---|---|")
    return PlaceDoc("place column", "\n".join(rows), places=items)


def _person(rng: random.Random) -> tuple[str, str]:
    """A text naming a person by a surname that is a place too, and the name as it stands."""
    surname = rng.choice(AMBIGUOUS)
    shape = rng.randrange(6)
    if shape == 0:
        return f"担当: {surname}", surname
    if shape == 1:
        return f"{surname}{rng.choice(HONORIFICS)}にご確認ください", surname
    if shape == 2:
        name = f"{surname} {rng.choice(GIVEN)}"
        return f"申請者 {name}", name
    if shape == 3:
        return f"{surname}{rng.choice(TITLES)}から承認をもらいました", surname
    if shape == 4:
        label = rng.choice(["支店の担当者", "営業所長", "エリア担当", "担当者"])
        return f"{label}: {surname}", surname
    name = f"{surname}{rng.choice(GIVEN)}"
    return f"{rng.choice(['支店', '営業所'])}の{name}さんから連絡", name


def _people_list(rng: random.Random) -> PlaceDoc:
    """People listed with a surname that is a place (担当者別（石川・山田）)."""
    surnames = [rng.choice(AMBIGUOUS), rng.choice(["山田", "佐藤", "田中", "渡辺", "井上"])]
    rng.shuffle(surnames)
    label = rng.choice(["担当者別売上", "担当者別", "営業担当別"])
    return PlaceDoc("people list", f"{label}（{'・'.join(surnames)}）", people=surnames)


def _person_doc(rng: random.Random) -> PlaceDoc:
    text, name = _person(rng)
    return PlaceDoc("person", text, people=[name])


def _mixed(rng: random.Random) -> PlaceDoc:
    """A place list and a person in one text, the person's surname another word."""
    place = _place_list(rng)
    person = _person_doc(rng)
    while any(p in person.people[0] or person.people[0] in p for p in place.places):
        person = _person_doc(rng)
    return PlaceDoc("mixed", f"{place.text}\n{person.text}", place.places, person.people)


_SHAPES = [
    _place_list,
    _place_list,
    _places_before_word,
    _place_table,
    _person_doc,
    _person_doc,
    _people_list,
    _mixed,
]


def make_docs(n: int = 300, seed: int = 14) -> list[PlaceDoc]:
    rng = random.Random(seed)
    return [rng.choice(_SHAPES)(rng) for _ in range(n)]


# Lists down the page: a label line, then one item a line (session 15).
PAGE_LABELS = ["支店一覧", "営業所:", "営業所: ", "拠点一覧", "都道府県", "県別売上", "出荷先の地域：", "エリア", "支社別の件数", "事業所"]  # fmt: skip
PEOPLE_LABELS = ["担当者一覧", "担当:", "支店長", "営業所長：", "申請者", "出席者", "承認者一覧"]
BULLETS = ["", "", "・", "- ", "● ", "{n}. ", "{n}) "]
SURNAMES = ["山田", "佐藤", "田中", "渡辺", "井上", "鈴木", "高橋"]


def _page_item(rng: random.Random, bullet: str, n: int, item: str) -> str:
    tail = rng.choice(
        ["", "", f"　{rng.randint(1, 999) * 1000:,}円", f" {rng.randint(1, 40)}件", "：済"]
    )
    return bullet.format(n=n) + item + tail


def _page_list(rng: random.Random) -> PlaceDoc:
    """Places one a line under a label about places, or surnames under a label about people."""
    bullet = rng.choice(BULLETS)
    lead = rng.choice(["", "", "以下のとおりです。\n", "4月の実績\n\n"])
    if rng.random() < 0.6:
        items = _places(rng, rng.randint(2, 5))
        label = rng.choice(PAGE_LABELS)
        gap = rng.choice(["\n", "\n", "\n\n"])
        lines = "\n".join(_page_item(rng, bullet, n, it) for n, it in enumerate(items, 1))
        tail = rng.choice(["", "\n\n前年比で並べてください。", "\n"])
        return PlaceDoc("page places", f"{lead}{label}{gap}{lines}{tail}", places=items)
    people = list(
        dict.fromkeys([rng.choice(AMBIGUOUS), rng.choice(SURNAMES), rng.choice(AMBIGUOUS)])
    )
    label = rng.choice(PEOPLE_LABELS)
    lines = "\n".join(
        _page_item(rng, bullet, n, it + rng.choice(["", "", "様", " " + rng.choice(GIVEN)]))
        for n, it in enumerate(people, 1)
    )
    return PlaceDoc("page people", f"{lead}{label}\n{lines}", people=people)


def make_page_lists(n: int = 300, seed: int = 15) -> list[PlaceDoc]:
    """Lists down the page: places under 支店一覧, 営業所:, 都道府県... (must stay), and surnames
    that are places too under 担当者一覧, 支店長, 承認者一覧... (must be masked)."""
    rng = random.Random(seed)
    return [_page_list(rng) for _ in range(n)]
