"""``report.markdown``: a Markdown report from a Jinja2 template and the plan's data.

The template runs in Jinja2's ``SandboxedEnvironment`` (no attribute tricks, bounded ``range``)
with ``StrictUndefined``: a misspelled name is an error naming the name and the template line,
never an empty string in a report someone signs off. Filters for accounting reports:
``table`` (records → GitHub-style table: amount columns with separators, their unit in the
header, total rows in bold), ``yen`` (``¥1,234``), ``number`` (``1,234.5``) and ``percent``
(``0.125`` → ``12.5%``); amounts and negatives are shown by ``documents.amount_format``, as in
the app and in Excel (``KEIRI_NEGATIVE_AMOUNTS``: ``△660`` by default). Images the report
links by a path elsewhere (a chart's ``chart.path``) are copied beside the ``.md`` and linked
by file name, so the report opens with its charts wherever it is taken
(``documents.markdown_report``). The output is capped (``MAX_OUTPUT_CHARS``) so a runaway
loop cannot fill the disk, and written atomically.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from functools import lru_cache
from types import TracebackType
from typing import Any

from jinja2 import (
    StrictUndefined,
    Template,
    TemplateError,
    TemplateSyntaxError,
    UndefinedError,
)
from jinja2.sandbox import SandboxedEnvironment

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.inputs import output_file
from keiri_agent.blocks.report.template_words import template_problem
from keiri_agent.blocks.table.cells import parse_amount
from keiri_agent.blocks.table.records import Table, records_from
from keiri_agent.documents.amount_format import (
    AmountFormat,
    header_label,
    is_amount_column,
    total_row_flags,
)
from keiri_agent.documents.markdown_report import gather_images
from keiri_agent.errors import BlockError, cause_of, input_error, reason_of
from keiri_agent.workspace import atomic_path

__all__ = ["MAX_OUTPUT_CHARS", "MarkdownReportBlock", "format_number", "markdown_table"]

DEFAULT_OUTPUT_NAME = "report.md"
MAX_OUTPUT_CHARS = 5_000_000
EMPTY_TABLE = "（該当なし）"
TEMPLATE_NAME = "<template>"
_UNDEFINED_NAME = re.compile(r"^'(.+)' is undefined$")
_NO_ATTRIBUTE = re.compile(r"has no (?:attribute|element) '?(.+?)'?$")
_FILTER_HINT = "フィルタの使い方: {{ 金額 | yen }}、{{ 件数 | number }}、{{ 率 | percent }}、{{ 明細 | table }}"


class MarkdownReportBlock(ProcessingBlock):
    """Renders ``template`` with ``data`` into ``markdown`` and writes it to ``path``."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        _compile(_template_text(inputs.get("template")))
        _data(inputs.get("data"))

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        env = _environment(AmountFormat.of(ctx.settings))
        template = _compile(_template_text(inputs.get("template")), env)
        data = _data(inputs.get("data"))
        parts: list[str] = []
        title = inputs.get("title")
        if title:
            parts.append(f"# {title}\n\n")
        size = sum(map(len, parts))
        try:
            for chunk in template.generate(**data):
                size += len(chunk)
                if size > MAX_OUTPUT_CHARS:
                    raise input_error(
                        f"テンプレートの出力が {MAX_OUTPUT_CHARS:,} 文字を超えました。",
                        "ループの範囲や、表にする行数を見直してください。",
                        field="template",
                    )
                parts.append(chunk)
                if len(parts) % 256 == 0:
                    ctx.check_cancelled()
        except BlockError as exc:
            if "line" not in exc.details and (line := _template_line(exc.__traceback__)):
                exc.details["line"] = line
                exc.message = f"テンプレート {line} 行目: {exc.message}"
                exc.args = (exc.message,)
            raise
        except UndefinedError as exc:
            raise _render_error(exc, data) from exc
        except TemplateError as exc:  # SecurityError and the like
            raise _render_error(exc, data) from exc
        except (ArithmeticError, LookupError, TypeError, ValueError) as exc:
            raise _render_error(exc, data) from exc
        markdown = "".join(parts)
        if not markdown.endswith("\n"):
            markdown += "\n"
        target = output_file(inputs.get("output_path"), ctx, DEFAULT_OUTPUT_NAME)
        markdown, images = gather_images(
            markdown, target.parent, lambda link: ctx.access.read(link, "template")
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        for source, copy in images:  # the charts beside the report, linked by file name
            with atomic_path(copy, suffix=copy.suffix, prefix=ctx.claim_output(copy)) as tmp:
                tmp.write_bytes(source.read_bytes())
        with atomic_path(target, suffix=".md", prefix=ctx.claim_output(target)) as tmp:
            tmp.write_text(markdown, encoding="utf-8")
        ctx.log(
            f"{target.name} に Markdown の報告書を書き出しました（{len(markdown):,} 文字"
            + (f"、画像 {len(images)} 枚を同じフォルダに" if images else "")
            + "）"
        )
        return {"markdown": markdown, "path": str(target)}


# --- filters ----------------------------------------------------------------------------------


def _amount(value: Any, filter_name: str) -> Decimal | None:
    if value is None:
        return None
    number = parse_amount(value)
    if number is None:
        raise input_error(
            f"{filter_name} フィルタに数値でない値 {str(value)[:50]!r} が渡されました。",
            _FILTER_HINT + "（数値か「1,234」のような数字の文字列を渡してください）",
            field="template",
            value=str(value)[:200],
        )
    if isinstance(value, int | Decimal):
        return Decimal(value)
    return Decimal(repr(number))


def format_number(
    value: Any,
    digits: int | None = None,
    *,
    filter_name: str = "number",
    amounts: AmountFormat = AmountFormat(),  # noqa: B008  (frozen: one shared value)
    prefix: str = "",
) -> str:
    """``1234567`` → ``1,234,567``; ``digits`` rounds half up; a negative as ``amounts`` says
    (``△660``); None stays empty."""
    number = _amount(value, filter_name)
    if number is None:
        return ""
    return amounts.text(number, digits, prefix=prefix)


class _Filters:
    """The report's filters, showing amounts by one :class:`AmountFormat`."""

    def __init__(self, amounts: AmountFormat) -> None:
        self.amounts = amounts

    def number(self, value: Any, digits: int | None = None) -> str:
        return format_number(value, digits, amounts=self.amounts)

    def yen(self, value: Any, digits: int = 0) -> str:
        return format_number(value, digits, filter_name="yen", amounts=self.amounts, prefix="¥")

    def percent(self, value: Any, digits: int = 1) -> str:
        number = _amount(value, "percent")
        if number is None:
            return ""
        return (
            format_number(number * 100, digits, filter_name="percent", amounts=self.amounts) + "%"
        )

    def table(
        self,
        data: Any,
        columns: Sequence[str] | None = None,
        formats: Mapping[str, str] | None = None,
    ) -> str:
        return markdown_table(data, columns, formats, amounts=self.amounts)


def markdown_table(
    data: Any,
    columns: Sequence[str] | None = None,
    formats: Mapping[str, str] | None = None,
    *,
    amounts: AmountFormat = AmountFormat(),  # noqa: B008  (frozen: one shared value)
) -> str:
    """Records as a GitHub-style table; numeric columns right-aligned, ``|`` escaped; amount
    columns with separators (negatives as ``amounts`` says) and their unit in the header
    (``売上金額（千円）``, from a table read from a file); total rows (合計, 小計...) in bold.

    ``formats`` maps a column to a filter name (``yen``, ``number``, ``percent``).
    """
    units = dict(data.units) if isinstance(data, Table) else {}
    records = records_from(data, field="table フィルタの値")
    names = list(columns) if columns else list(dict.fromkeys(k for r in records for k in r))
    available = list(dict.fromkeys(k for r in records for k in r))
    missing = [c for c in [*names, *(formats or {})] if records and c not in available]
    if missing:
        raise input_error(
            f"table フィルタの列 {', '.join(missing)} が表にありません。",
            f"表にある列名を指定してください。使える列: {', '.join(available) or 'なし'}",
            field="template",
            missing=missing,
        )
    if not records:
        return EMPTY_TABLE
    shown = _Filters(amounts)
    filters = {"yen": shown.yen, "number": shown.number, "percent": shown.percent}
    unknown = [f for f in (formats or {}).values() if f not in filters]
    if unknown:
        raise input_error(
            f"table フィルタの formats に使えない形式 {', '.join(unknown)} があります。",
            "formats の値には yen / number / percent を指定してください。",
            field="template",
        )
    numeric = {
        c
        for c in names
        if any(r.get(c) is not None for r in records)
        and all(
            isinstance(r.get(c), int | float) and not isinstance(r.get(c), bool)
            for r in records
            if r.get(c) is not None
        )
    }
    amount = {c for c in numeric if is_amount_column(c, (r.get(c) for r in records))}
    lines = [
        "| " + " | ".join(_escape(header_label(n, units.get(n))) for n in names) + " |",
        "| " + " | ".join("---:" if n in numeric else "---" for n in names) + " |",
    ]
    for record, total in zip(records, total_row_flags(records, names), strict=True):
        cells = []
        for name in names:
            value = record.get(name)
            kind = (formats or {}).get(name)
            if kind:
                text = filters[kind](value)
            elif name in amount:
                text = amounts.text(value)
            else:
                text = _plain(value)
            text = _escape(text)
            cells.append(f"**{text}**" if total and text else text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _plain(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "はい" if value else "いいえ"
    return str(value)


def _escape(text: str) -> str:
    return (
        str(text)
        .replace("\\", "\\\\")
        .replace("|", "\\|")
        .replace("\r\n", "\n")
        .replace("\n", "<br>")
    )


# --- template ---------------------------------------------------------------------------------


@lru_cache(maxsize=8)  # one per way of showing negatives
def _environment(amounts: AmountFormat) -> SandboxedEnvironment:
    """The template environment whose filters show amounts by ``amounts`` (no mutable state
    once built; Jinja2 environments are thread-safe)."""
    env = SandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True
    )
    shown = _Filters(amounts)
    env.filters.update(
        {"table": shown.table, "yen": shown.yen, "number": shown.number, "percent": shown.percent}
    )
    return env


def _template_text(value: Any) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise input_error(
        "テンプレート（template）が指定されていません。",
        "template に Markdown の本文を書き、差し込む値は {{ 名前 }} で指定してください。",
        field="template",
    )


def _compile(text: str, env: SandboxedEnvironment | None = None) -> Template:
    try:
        return (env or _environment(AmountFormat())).from_string(text)
    except TemplateSyntaxError as exc:
        problem = template_problem(exc)
        raise input_error(
            f"テンプレート {exc.lineno} 行目の書き方に誤りがあります"
            + (f": {problem}" if problem else ""),
            "{{ 名前 }}・{% for 行 in 表 %}...{% endfor %}・{% if 条件 %}...{% endif %} の"
            "括弧や閉じタグの対応を確認してください。",
            field="template",
            line=exc.lineno,
            cause=cause_of(exc),
        ) from exc


def _data(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        return dict(value)
    raise input_error(
        "data がオブジェクト（名前 → 値）ではありません。",
        "data は {件数: ${集計.summary}, 明細: ${読込.rows}} のように名前を付けて渡してください。",
        field="data",
    )


def _template_line(tb: TracebackType | None) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == TEMPLATE_NAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _render_error(exc: Exception, data: Mapping[str, Any]) -> BlockError:
    line = _template_line(exc.__traceback__)
    where = f"テンプレート {line} 行目" if line else "テンプレート"
    names = ", ".join(data) or "なし"
    if isinstance(exc, UndefinedError):
        text = exc.message or ""
        if found := _UNDEFINED_NAME.search(text):
            what = f"「{found[1]}」は data にありません"
        elif found := _NO_ATTRIBUTE.search(text):
            what = f"列（キー）「{found[1]}」がありません"
        else:
            what = f"値がありません（{text}）"
        message = f"{where}: {what}。"
        hint = (
            f"data に渡した名前（{names}）と、表の列名の綴りを確認してください。"
            "値がないこともある場合は {{ 名前 | default('') }} と書けます。"
        )
    else:
        message = f"{where}を処理できません: {reason_of(exc)}"
        hint = f"テンプレートの式を確認してください（使える名前: {names}）。"
    return input_error(message, hint, field="template", line=line, reason=str(exc))
