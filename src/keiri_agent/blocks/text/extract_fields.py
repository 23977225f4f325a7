"""``text.extract_fields``: one record per evidence file, fields read with regular expressions.

Structured documents (invoices issued by one system, statements, forms) say the same things in
the same words: ``請求書番号: INV-001``, ``ご請求金額 ¥110,000``. A pattern per field reads them
without an LLM, deterministically and for free; ``ai.process_llm`` is for the rest.

Each field is a regular expression searched in the file's text (already NFKC-normalized by the
file layer, so full-width digits and colons are ASCII). The value is the named group ``value``,
else the first group, else the whole match; ``type`` converts it (``amount`` → number,
``date`` → ISO date, ``integer``, ``string``). In a document the dash after a currency amount
(``￥12,000-``, ``$1,200-``, ``12,000円-``, ``金12,000-``) is the end mark (止め) that receipts
and invoices write, never a minus (``cell_forms.DASH_END``); a dash after bare digits
(``1,200-``) is the trailing minus of a system's printout. A required field that is missing or does not
convert is a problem of that file: by default the block stops with a BlockError naming every
such file and field (``on_missing: error``); with ``on_missing: report`` those files go to
``problems`` and the others are extracted. Nothing is guessed and nothing is dropped unsaid.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import choice, string_list, unique_names
from keiri_agent.blocks.table.cells import parse_date
from keiri_agent.documents.cell_forms import DASH_END, read_amount
from keiri_agent.errors import input_error, reason_of

__all__ = ["FIELD_TYPES", "ExtractFieldsBlock", "FieldRule"]

FIELD_TYPES = ("string", "amount", "date", "integer")
ON_MISSING = ("error", "report")
MAX_LISTED_PROBLEMS = 10  # problems spelled out in an error message; all are in details


@dataclass(frozen=True)
class FieldRule:
    name: str
    pattern: re.Pattern[str]
    type: str
    required: bool


class ExtractFieldsBlock(ProcessingBlock):
    """Turns ``evidence_data`` into ``records`` with the plan's field patterns."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _rules(inputs.get("fields"))
        _files(inputs.get("evidence_data"))
        choice(inputs, "on_missing", ON_MISSING)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        rules = _rules(inputs.get("fields"))
        files = _files(inputs.get("evidence_data"))
        include = _patterns(inputs.get("include"))
        on_missing = choice(inputs, "on_missing", ON_MISSING)
        group_column = inputs.get("group_column") or None
        file_column = inputs.get("file_column") or None
        records: list[dict[str, Any]] = []
        problems: list[dict[str, Any]] = []
        skipped = 0
        zone = ctx.zone
        for record in files:
            path = str(record.get("path") or record.get("name") or "")
            if include and not any(_matches(path, p) for p in include):
                skipped += 1
                continue
            ctx.check_cancelled()
            row, found = _extract(record, rules, path, zone)
            if found:
                problems.extend(found)
                continue
            if file_column:
                row = {file_column: path, **row}
            if group_column:
                row = {group_column: record.get("group", ""), **row}
            records.append(row)
        if problems and on_missing == "error":
            listed = "、".join(
                f"{p['ファイル']}（{p['項目'] or 'ファイル'}: {p['内容']}）"
                for p in problems[:MAX_LISTED_PROBLEMS]
            )
            more = len(problems) - MAX_LISTED_PROBLEMS
            raise input_error(
                f"{len({p['ファイル'] for p in problems})} ファイルで項目を読み取れませんでした: "
                + listed
                + (f" ほか {more} 件" if more > 0 else ""),
                "パターン（fields の pattern）がファイルの書き方に合っているか確認してください。"
                "読み取れないファイルを除いて続けるには on_missing: report を指定し、"
                "problems を確認してください。書式の決まっていない書類は ai.process_llm で抽出します。",
                problems=problems,
            )
        ctx.log(
            f"{len(records)} ファイルから項目を抽出しました"
            f"（読み取れなかったファイル {len({p['ファイル'] for p in problems})}、対象外 {skipped}）"
        )
        return {
            "records": records,
            "problems": problems,
            "summary": {
                "files": len(files),
                "extracted": len(records),
                "problem_files": len({p["ファイル"] for p in problems}),
                "skipped": skipped,
            },
        }


def _extract(
    record: Mapping[str, Any], rules: list[FieldRule], path: str, zone: dt.tzinfo
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The file's fields (a date with a UTC offset on its day in ``zone``), or the problems
    that stop it from being a record."""
    if record.get("error"):
        error = record["error"]
        message = error.get("message") if isinstance(error, Mapping) else str(error)
        return {}, [{"ファイル": path, "項目": "", "内容": f"ファイルを読めません: {message}"}]
    text = record.get("text")
    if not isinstance(text, str):
        reason = "テキストがありません（include_text: false で読み込んだ可能性があります）"
        return {}, [{"ファイル": path, "項目": "", "内容": reason}]
    row: dict[str, Any] = {}
    problems: list[dict[str, Any]] = []
    for rule in rules:
        match = rule.pattern.search(text)
        if match is None:
            row[rule.name] = None
            if rule.required:
                problems.append({"ファイル": path, "項目": rule.name, "内容": "見つかりません"})
            continue
        raw = _matched_value(match).strip()
        value = _convert(raw, rule.type, zone)
        row[rule.name] = value
        if value is None and rule.required:
            kind = {"amount": "金額", "date": "日付", "integer": "整数"}.get(rule.type, "値")
            problems.append(
                {"ファイル": path, "項目": rule.name, "内容": f"「{raw}」を{kind}として読めません"}
            )
    return row, problems


def _matched_value(match: re.Match[str]) -> str:
    if "value" in match.re.groupindex:
        return match["value"] or ""
    if match.re.groups:
        return match.group(1) or ""
    return match.group(0)


def _convert(raw: str, kind: str, zone: dt.tzinfo) -> Any:
    if kind == "string":
        return raw or None
    if kind == "amount":
        number = read_amount(raw.replace(" ", ""), DASH_END)
        return int(number) if isinstance(number, float) and number.is_integer() else number
    if kind == "date":
        date = parse_date(raw, zone)
        return date.isoformat() if date else None
    parsed = read_amount(raw, DASH_END)
    return parsed if isinstance(parsed, int) else None


def _rules(raw: Any) -> list[FieldRule]:
    hint = (
        "fields には {name: 項目名, pattern: 正規表現, type: string|amount|date|integer} の"
        "リストを指定してください。値は名前付きグループ (?P<value>...) か最初のグループで示します。"
    )
    if not isinstance(raw, list) or not raw:
        raise input_error("fields（抽出する項目）が指定されていません。", hint, field="fields")
    rules: list[FieldRule] = []
    for index, item in enumerate(raw, start=1):
        where = f"fields の {index} 番目"
        if not isinstance(item, Mapping):
            raise input_error(f"{where}がオブジェクトではありません。", hint, field="fields")
        name, pattern = item.get("name"), item.get("pattern")
        if not isinstance(name, str) or not name.strip():
            raise input_error(f"{where}に name がありません。", hint, field="fields", index=index)
        if not isinstance(pattern, str) or not pattern:
            raise input_error(
                f"{where}（{name}）に pattern がありません。", hint, field="fields", index=index
            )
        kind = item.get("type", "string")
        if kind not in FIELD_TYPES:
            raise input_error(
                f"{where}（{name}）の type「{kind}」は使えません。",
                f"type は {' / '.join(FIELD_TYPES)} のいずれかです。",
                field="fields",
                index=index,
            )
        try:
            compiled = re.compile(pattern, re.MULTILINE)
        except re.error as exc:
            raise input_error(
                f"{where}（{name}）の正規表現が不正です: {reason_of(exc)}",
                "Python の正規表現として書いてください（例: 請求書番号[:：\\s]*(?P<value>\\S+)）。",
                field="fields",
                index=index,
                pattern=pattern,
            ) from exc
        rules.append(FieldRule(name.strip(), compiled, str(kind), bool(item.get("required", True))))
    unique_names(
        [rule.name for rule in rules],
        "fields",
        "fields の項目名 {names} が重複しています。",
        "項目名は出力レコードの列名になるため、重ならない名前にしてください。",
        detail=None,
    )
    return rules


def _files(raw: Any) -> list[Mapping[str, Any]]:
    files = raw.get("files") if isinstance(raw, Mapping) else None
    if not isinstance(files, list) or not all(isinstance(f, Mapping) for f in files):
        raise input_error(
            "evidence_data にファイルの一覧（files）がありません。",
            "file.parse_zip_2tier か file.extract_text の evidence_data をつないでください。",
            field="evidence_data",
        )
    return files


def _patterns(raw: Any) -> list[str]:
    if raw is None:
        return []
    patterns = string_list(raw)
    if patterns is None:
        raise input_error(
            "include にはファイル名のパターン（例: *.pdf）か、そのリストを指定してください。",
            '例: include: ["*.pdf", "*.xlsx"]',
            field="include",
        )
    return patterns


def _matches(path: str, pattern: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return fnmatch.fnmatchcase(path.lower(), pattern.lower()) or fnmatch.fnmatchcase(
        name.lower(), pattern.lower()
    )
