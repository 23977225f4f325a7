"""The block catalog for people: port details, a usage example per block, and docs/blocks.md.

``docs/blocks.md`` is generated from the specs (``keiri-agent blocks docs``) so it cannot drift
from what the registry loads; a test checks that the committed file is current. The example
node of each block is built from its declared ``examples``, and the catalog test validates and
dry-runs exactly that node, so every example in the document is known to pass the validator.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from keiri_agent.blocks.spec import BlockSpec, port_accept, port_is_required

__all__ = [
    "example_node",
    "example_plan",
    "port_details",
    "port_kind",
    "port_type",
    "render_markdown",
    "summary",
]

DOC_HEADER = """\
# ブロックカタログ

<!-- このファイルは `keiri-agent blocks docs` が block_specs から生成します。直接編集しないでください。 -->

Plan（`designs/*.yaml`）の `graph` で使えるブロックの一覧です。各ブロックの入出力は JSON Schema で
定義され、検証（`keiri-agent plan validate`）とドライラン（`keiri-agent plan dry-run`）はこの定義に
基づいて行われます。表は各ブロックの最新版です。Plan の書き方は [plan-dsl.md](plan-dsl.md) を
参照してください。「使用例」は宣言された入力例から作ったノードで、テストで検証・ドライランしています。
型に「パス（読み込み）」「パス（書き込み）」とある入力はファイルやフォルダのパスです。「パス（読み込み:
.xlsx / .xlsm）」のように拡張子があるものは、そのブロックが読める種類のファイルです（アプリのアップロード欄も
その種類だけを受け付けます）。API サーバーの
タスクでは、読めるのはそのタスクのアップロード・出力と共有データフォルダ（`KEIRI_SHARED_DATA_DIRS`）の
中だけ、書けるのはそのタスクのフォルダの中だけです。

## 表の読み方（金額・日付・単位・位置）

`file.read_table` と表のブロック（`table.*`・`report.chart`・`excel.write_report` など）は、経理の台帳や
会計ソフト・銀行の出力にある書き方をそのまま読みます（規則は `keiri_agent/documents/cell_forms.py` の 1 か所に
あり、どのブロックでも同じです）。

- **金額**: `1,234`、`¥1,234`・`￥1,234`・`\\1,234`（Shift_JIS の円記号）、`1,234円`、`JPY 1,234`・`1,234 JPY`
  （銀行や決済サービスの出力）、万・億の位を書いた円（`1万2,000円`・`1億2,345万円`・`1万2千円`。各位の数字は次の位
  より小さく。`12万円` のように位が 1 つだけの金額はセルの単位として読みます）、全角の数字とカンマ
  （`１，２３４`）、前後や記号のあいだの空白。マイナスは `-`（全角・Unicode のマイナス記号も）、`▲`・`△`、
  円記号の後の `▲`（`￥▲1,200`）、括弧 `(1,200)`（会計の書式）、または数字の後ろの `-`（`1,200-`・`1,200－`。多くの会計・販売管理
  システムの印刷や出力の書き方。info に個数を注記）。マイナスの書き方は 1 つだけで、後ろの `-` は数字のすぐ後
  だけです。**円記号・円の付いた金額の後ろの `-`**（`￥12,000-`・`¥1,200－`・`\\3,300-`・`¥1,200ー`・
  `1,200円-`。`$1,200-`・`金12,000-` も同じ）は、領収書・請求書では金額の終わりの印（止め: 後から数字を書き足せないようにする印）、会計
  システムの出力ではマイナスなので、列のほかのセルで決めます: 列の円記号・円の付いた金額のすべてに付いていて、
  数字の後ろに `-` の付いた金額（`1,200-`）がない列では止めとしてプラスに読み（info に個数を注記）、
  `1,200-` のように数字の後ろの `-` でマイナスを書き、符号のない金額も並ぶ列ではマイナスに読みます。それ以外
  （円記号の金額の一部だけに付いている列など）はどちらか決められないので読まずに、行と理由を挙げます。1 つの
  セルだけ（表の外の値）ではどちらか決められないので読みません。`text.extract_fields` が書類（領収書・請求書）の
  文から読む金額では止めとしてプラスに読みます（数字だけの `1,200-` はマイナス）。**ドル**: `$` の付いた金額だけの
  列は数値として読みますが、円の金額（記号のない金額を含む）の列に混ざった `$` の金額は、ドルと円を足さないよう
  読まずに行と理由を挙げ、表のブロックもそのセルで止まります。`円` の後の
  `-` と長音記号の `ー` はマイナスとは読まず、止めとしてだけ読みます。言葉の `赤字`（`赤字1,200`）もマイナスです。銭は円の後に 2 桁まで
  （`1,200円50銭` は 1200.5）。領収書の書き方 `金1,200円也`・`金1,200円`（符号のない円の金額だけ）と、金額の後の
  止めの `※`（`¥1,200※`）も読みます。小数点にカンマ・桁区切りに点を使う書き方（`1.200,50`・`1.200.000`）は
  どちらが小数点か決められないので読まずに挙げ、そうしたセルのある列では `1.200` のセルも（1,200 か 1.2 か
  決められないので）挙げます。指数の表記（`1.2E+06`）は Excel が丸めて表示した値なので読まずに挙げます。`-` だけのセルは 0（会計の書式が 0 を `-` と表示するため。info に注記）。
  先頭が 0 の数字（`0123`・`0012-`）は番号（コード）として文字のまま残し、`2026-02-` のような日付の切れ端も
  金額にしません。見出しの行に `(1)`・`(2)`・`(3)` のように括弧付きの番号や `①`・`②`・`③` のような丸数字が
  文字として順に並ぶ場合（書式の列番号）は、マイナスの金額や数字ではなく見出しとして読みます。Excel で
  数値 -1・-2・-3 に会計の書式を付けて `(1)`・`(2)`・`(3)` と表示しているだけの行は、値が数値なので
  見出しではなくデータの行として読みます（表示の書式ではなくセルの値で判断します）。金額の列にある `①`・`⑴`・`⒈`
  のような 1 文字の番号の記号（箇条書きの印）は金額 1 とは読まず、ほかの文字と同じく読めないセルとして行と列を
  示します。
- **日付**: `2026-02-03`、`2026/2/3`、`2026.2.3`、`2026年2月3日`、曜日付き（`2026/2/3(火)`・`2026年2月3日（火曜日）`・`2026/2/3 火曜日`）、時刻付き
  （`2026/02/03 10:15`、`10時15分`、`10時`、`10時半`、`午前10時`・`午後3:30`・`PM3:30`・`3:30 p.m.`、ISO 8601 の
  `T`、曜日のすぐ後の時刻 `2026/2/3(火)10:15`、ナノ秒まで書いた秒（マイクロ秒まで読みます）。`午前`・`午後` の 12 時は正午とも午前 0 時とも読めるので、`午後15時` のような矛盾とともに読まずに挙げます）、`20260203`（見出しが日付を表す列）、月末（`2026年2月末日`・`2026/2/末`・`令和8年2月末`: その月の末日）、和暦
  （`令和8年2月3日`・`R8.2.3`・`令8.2.3`・`R8/2/3`・`平成31年4月30日`・`令和元年5月1日`、令和・平成・昭和・大正）、
  日付の列にある Excel のシリアル値。時差の付いた日時（`2026-02-03T10:00:00+09:00`・`…Z`・`…-05:00`・`… +0900`・`…+09`・`… JST`・`… (JST)`・`… UTC`・`… GMT`。秒も `T` もない時刻の後の `-`（`2026/2/3 10:00-12:00`）は時刻の範囲の終わりとも
時差とも読めるので読まずに挙げます）は
  `KEIRI_TIMEZONE`（既定 Asia/Tokyo）の時刻に直してから時差の表示を外します（同じ時刻は時差の書き方に
  かかわらず同じ値。直した個数と、そのうち時刻が変わった個数を info に注記）。表のブロック（`table.filter` の
  日付の条件・式の日付・突き合わせの日付など）も同じ `KEIRI_TIMEZONE` の同じ規則で、
  `2026-02-03T23:30:00+00:00` は既定（Asia/Tokyo）ではどこでも 2026-02-04、`UTC` なら 2026-02-03 の日付です。**年月**: `2026年2月`・`2026/02`・`2026-02`・`令和8年2月`・`R8.2`、見出しが年月を表す列（`年月`・`対象年月`。`年月日` は除く）で
  すべてのセルが 6 桁の年月（`202602`: 会計ソフトの期間の書き方）なら年月の列（info に注記。1 つでも違えば数値のまま）。
  年が 2 桁（`26/2/3`）は何年か決められないので読まず、年が最後の日付（`02/03/2026`）は 月/日 か 日/月 か
  決められないので読まず、理由を付けて `info.unreadable` に挙げます（年や順序を推測しません）。年のない日付（`2/3`・`2月3日`）だけの列は、表の上のタイトル行が期間を一つだけ書いているとき
  （`2026年2月分`・`令和8年2月度`・`期間：2025/4/1～2026/3/31`・`自 令和7年4月1日 至 令和8年3月31日`）に限り、
  その期間の中の日として読み、info に注記します（期間の行はセルに分けて書かれていても
  `期間 | 2026/2/1 | ～ | 2026/2/28`、表より横に広くても、見出しではなくタイトル行です）。期間の外の日や、1 年より長い期間で 2 つの日に当たる月日が
  あれば、列は書かれたまま残し、すべてのセルを理由つきで挙げます。期間が書かれていない（`2025年度` だけは
  期首の月が分からないので期間としません。作成日や 2 つの期間も同じ）ときも読まずに挙げます。年を書いている
  列の中で 1 セルだけ年がないものは、書き漏れとして挙げます。曜日が日付と合わないセル（`2026年2月3日(水)`）も、どちらが
  正しいか決められないので読まずに挙げます。元号の期間外の和暦（`平成31年5月1日`・`令和元年4月1日`）は、
  書かれた年が指す日（2019-05-01・2019-04-01）として読み、元号の期間と最初のセルを info に注記します（改元前に
  印刷した書式の日付として実際に使われ、年は一つに決まるため）。元号のない年（`元年5月1日`・`31年5月1日`）は
  どの元号か決められないので読まずに挙げます。日付の列の `-`・`―` だけのセル（未払いの支払日など）は日付なしとして
  空欄にし、個数を info に注記します。
- **列の型**: 空欄以外のすべてのセルが金額なら金額の列、すべてが日付なら日付の列（時刻があれば日時）、すべてが
  年月なら年月の列、すべてが百分率（`10%`・`８％`）なら割合の数値の列（0.1。Excel の `0%` 書式のセルと同じ値。
  info に注記）になります。Excel でパーセントの表示形式の数値（0.1 を `10%` と表示）は、表示どおりの百分率
  （`10%`）として読むので、書式の付いたセルと文字の `10%` が混ざった列も一つの割合の列になります。百分率の列に
  書式のない数値（`0.1` や `10`）や言葉が混ざっていれば、割合か百分率の数か決められないので、列は書かれた文字の
  まま残し、そのセルの位置と理由を `info.unreadable` に挙げます（空欄にすると合計などで黙って飛ばされるため。
  その列で計算するブロックは止まります。0 はどちらでも 0、`-`・`―` だけのセルは割合なしとして空欄にし info に
  注記）。見出しが金額や日付を表す（金額・売上・残高・千円…、日付・計上日…）列は半分以上、
  そうでない列は 10 セル以上のうち 9 割以上が読めれば、その型の列とみなし、読めなかったセルをファイルの位置と
  理由つきで `info.unreadable` に挙げます（日付の列のそのセルは空欄に、金額の列は書かれた文字のまま残し、
  数値が必要なブロックはその最初のセルを示して止まります）。
- **空欄**: 空欄はどの型の列でも null です。Excel や CSV に書き出すときも空のセルで、`<NA>`・`nan`・`None`
  のような文字にはなりません。
- **単位**: 見出し（`金額（千円）`）やタイトル行（`（単位：千円）`）に書かれた `千円`・`百万円`・`万円` は
  `info.units` に記録し、数値は書かれたまま読みます（円には換算しません）。タイトル行の単位は金額の列と、月次推移表
  などの期間の列（`4月`・`2025年4月`・`前期`・`当期`・`予算`・`実績`・`差異`）に付け、件数や率（`増減率`・
  `前年比`）には付けません。Excel で表示形式が値を 1,000 で割って見せている列（`#,##0,`。見出しは千円でも
  セルには円の値）は、セルの値のまま読み、単位はセルの値の単位（円）とし、info に注記します。Excel の見出しの
  セルが日のない表示形式（`m"月"` など）の日付なら、その月の名前（`2025年4月`）を列名にします。集計した列にも単位が引き継がれ、
  `excel.write_report` は見出しに単位を付けて書き出します（`金額合計（千円）`）。`table.compute` で計算した
  列は、式から単位が明らかなとき（`rounddown([金額] * 0.1, 0)` など）だけ引き継ぎ、`[金額] * 1000` のような
  換算かもしれない式や率には付けません。単位の行（`（単位：千円）`・`単位：円`）が表の下（データのすぐ下や合計行の
  下）にあっても同じく単位とし、その行はデータから外します。表の上と下で違う単位が書かれていれば、どちらが
  正しいか決められないので単位を付けず、info に注記します。
  **セルに書かれた単位**（`1,200千円`・`3.5百万円`・`12万円`・`1,200円`・`￥1,200千`）: 列のセルがみな同じ単位を
  書いていれば（または見出しかタイトル行が単位を書いていれば）、それを列の単位として `info.units` に記録し、数値は
  その単位のまま読みます。セルごとに単位が違えば、黙って足すことはせず、書かれた単位のとおり正確に（10 進で）
  列の単位に換算し、個数と最初のセルを info に注記します。列の単位は、見出しかタイトル行の単位、なければセルの
  単位のうち最も小さいもの（`1,200千円` と `500円` の列は円。換算は掛け算だけで端数が出ません）です。見出しが
  `金額（千円）` でセルが `2,300円` なら、そのセルは 2.3（千円）です（数値に付いた単位は、列全体についての見出しより
  そのセルについて確かなため。注記で確かめられます）。単位のない数値が `千円` などのセルに混ざり、見出しにも
  タイトル行にも単位がなければ（`1,200千円` と `300`）、300 円か 300 千円か決められないので、列は書かれたまま
  残してそのセルを `info.unreadable` に挙げ、金額が必要なブロックは止まります。円以外の単位が付いたセルは、表の
  ブロックでは単位の分からない金額として読まず、止まって位置を示します。
  データ分析エージェント（`ai.analyze_data`・`keiri-agent analyze`）と変換（`data.convert`・`keiri-agent convert`）
  は同じ読み方をしたうえで、単位のある金額を円に換算し、見出しを `金額（円）` にします（生成したコードと AI の
  レポートは円で考えるため。換算したことはプロンプトと表の概要に書きます）。
- **合計行**: 最初の 2 つの値のどちらかが `合計`・`小計`・`総計`・`累計`・`計`（`営業部 計`、`4月合計`、
  `部門計`・`月計`、印刷の `頁計`・`ページ計` なども。`会計`・`統計` のような語は除く）である行と、ラベルがなく、上のすべての行に値のある列が
  空欄で、金額が上の行の合計と一致する最後の行は、データから外して `totals` に入れ、`info.totals` に位置を
  記録します（集計で二重に足されません）。表全体の合計の行（`合計`・`総計`・`総合計`）が 1 行だけあれば、その
  金額を数値の列の明細の合計と照らし、一致しない列はその位置と差を info に注記します（行の抜けや読めなかった
  金額、ファイルの合計の誤りに気付けるように）。千円・百万円の列では行も合計もそれぞれ端数処理されるため、
  差が「明細の行数 + 1」単位より小さければ端数処理の差として注記します。金額の列（率・比・%・単価・残高の列を
  除く）に端数処理で説明できない差があると、`file.read_table`、データ分析、変換は合計のセルの位置・ファイルの
  合計・明細の合計・差を示して読み込みで止まります（ラベルのない小計の行 ― 部門の明細の下に金額だけの行 ― は
  データとして読まれ、そのままでは後の集計でその部門が二重に足されるため）。ファイルの合計の方が誤っていると
  分かっているときは、`file.read_table` の `total_check: warn` で警告を残して明細の行のまま続けられます（差は
  `info.total_differences`）。端数処理の差なら注記して明細の行を使います。金額として読めないセルのある列は、
  `file.read_table` ではそのセルを使うブロックがセルの位置を示して止まります。表全体の合計の行がないファイルの
  ラベルのない小計は見分けられません。
- **ページごとの行**: 印刷やページ分けの出力で、ページごとに繰り返される見出しの行（空白の違いは問いません）と、
  その上にあるページ番号（`- 1 -`・`1/3 ページ`・`P.1`・`1頁`）やタイトル行の繰り返しは、データから外して
  `info.layout` にファイルの位置と文字（`{position, text}`）で記録します。最後のページの下のページ番号は表の後の
  注記として扱います。
- **表の後の注記**: 合計行（ラベルのある行、またはラベルがなく上の行の合計と一致する行）の下か、金額のある行の
  後の空行の下にある、金額の列に金額のない最後の行（`※ 金額は税込です`・`以上`・`出力日: 2026/02/03`・
  `担当: 経理部`・`ページ 1/1` など。最後の 20 行まで）は、データから外して `info.footer` にファイルの位置と
  文字（`{position, text}`）で記録します。金額のある行は、摘要が `以上` でもデータです。小計の後に続く行も
  データのままです。`※` や `注` で始まる行（`※ 金額は税抜です`・`(注1) …`）は、データのすぐ下でも注記です。
  それ以外で合計行も空行もなくデータのすぐ下にある行と、金額の列がない表の行はデータとして残します。
- **位置**: エラーや注記でセルや行を示すときは、利用者がファイルを開いて見る位置で示します。CSV は
  タイトル行と見出し行も数えたファイルの行番号（`売上.csv の 7 行目の列「金額」`）、Excel はシート名と
  シートの行番号と列記号（`売上.xlsx のシート「明細」の 9 行目の列「金額」（D9 セル）`）です。絞り込み・
  並べ替え・結合の後でも元の位置で示します。ブロックが作った行（集計結果など）は表の中の何行目かで示します。
"""
PATH_WORDS = {"read": "読み込み", "write": "書き込み"}  # a port's ``path`` as 型 says it


def port_type(port: Mapping[str, Any]) -> str:
    """The port's type as people read it: ``string``, ``array | object``, ``$ref`` name."""
    declared = port.get("type")
    if isinstance(declared, list):
        return " | ".join(str(t) for t in declared)
    if declared:
        return str(declared)
    ref = port.get("$ref")
    if isinstance(ref, str):
        return ref.removeprefix("jsonschema://")
    return "any"


def port_kind(port: Mapping[str, Any]) -> str:
    """The 型 of a port in docs/blocks.md and ``blocks show``: its type, its choices, and for a
    path whether the block reads or writes it and the file types it reads
    (``string、パス（読み込み: .xlsx / .xlsm）``)."""
    kind = port_type(port)
    if "enum" in port:
        kind += "（" + " / ".join(str(v) for v in port["enum"]) + "）"
    if "path" in port:
        types = " / ".join(port_accept(port))
        kind += f"、パス（{PATH_WORDS[str(port['path'])]}{f': {types}' if types else ''}）"
    return kind


def port_details(port: dict[str, Any], *, required: bool) -> dict[str, Any]:
    """What a person needs to fill one port: type, required, default, choices, description,
    and for a path port whether it is read or written and the file types it reads."""
    out: dict[str, Any] = {"type": port.get("type", port.get("$ref", "any"))}
    out["required"] = required
    for key in ("label", "default", "enum", "description", "path", "accept"):
        if key in port:
            out[key] = port[key]
    return out


def example_node(spec: BlockSpec, node_id: str = "node") -> dict[str, Any]:
    """A node using the block: inputs set to their first declared examples, every output kept."""
    inputs = {
        name: port["examples"][0] for name, port in spec.inputs.items() if port.get("examples")
    }
    return {
        "id": node_id,
        "block": spec.id,
        "in": inputs,
        "out": {name: name for name in spec.outputs},
    }


def example_plan(spec: BlockSpec) -> str:
    """A one-node plan of :func:`example_node` as YAML."""
    plan = {
        "apiVersion": "v1",
        "id": "catalog_example",
        "version": "0.1.0",
        "graph": [example_node(spec)],
    }
    return yaml.safe_dump(plan, allow_unicode=True, sort_keys=False)


def _cell(text: Any) -> str:
    """Text for one Markdown table cell (no line breaks or bare pipes)."""
    flat = " ".join(str(text).split())
    return flat.replace("|", "\\|")


def _value(value: Any) -> str:
    return "`" + json.dumps(value, ensure_ascii=False) + "`"


def _section(spec: BlockSpec) -> list[str]:
    lines = [
        f"### {spec.id}",
        "",
        f"**{spec.shown_name}**　版 {spec.version}　カテゴリ `{spec.category}`"
        + ("　タグ: " + "、".join(spec.tags) if spec.tags else ""),
        "",
        spec.description.strip(),
        "",
        "| 入力 | 名前 | 型 | 必須 | 既定値 | 説明 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, port in spec.inputs.items():
        required = "必須" if port_is_required(port) else ""
        default = _value(port["default"]) if "default" in port else ""
        lines.append(
            f"| `{name}` | {_cell(spec.port_label(name))} | {_cell(port_kind(port))} | {required} "
            f"| {_cell(default)} | {_cell(port.get('description', ''))} |"
        )
    lines += ["", "| 出力 | 名前 | 型 | 説明 |", "| --- | --- | --- | --- |"]
    for name, port in spec.outputs.items():
        lines.append(
            f"| `{name}` | {_cell(spec.port_label(name))} | {_cell(port_type(port))} "
            f"| {_cell(port.get('description', ''))} |"
        )
    node = yaml.safe_dump(
        [example_node(spec, node_id=spec.id.replace(".", "_"))],
        allow_unicode=True,
        sort_keys=False,
        width=100,
    )
    lines += ["", "使用例:", "", "```yaml", node.rstrip(), "```", ""]
    return lines


def render_markdown(specs: Iterable[BlockSpec]) -> str:
    """docs/blocks.md: a table of contents by category, then one section per block."""
    ordered = sorted(specs, key=lambda s: (s.category, s.id))
    lines = [DOC_HEADER, "## 一覧", "", "| 名前 | ID | 概要 |", "| --- | --- | --- |"]
    for spec in ordered:
        anchor = spec.id.replace(".", "")
        lines.append(
            f"| {_cell(spec.shown_name)} | [{spec.id}](#{anchor}) "
            f"| {_cell(summary(spec.description))} |"
        )
    lines.append("")
    category = None
    for spec in ordered:
        if spec.category != category:
            category = spec.category
            lines += [f"## {category}", ""]
        lines += _section(spec)
    return "\n".join(lines).rstrip() + "\n"


def summary(text: str) -> str:
    """The first sentence of a description (descriptions are often one long line)."""
    line = (text.strip().splitlines() or [""])[0]
    head, sep, _ = line.partition("。")
    return head + sep
