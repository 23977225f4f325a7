"""The error after a CodeAct loop that made nothing: its own code, one sentence per part (no
"。。"), and a hint that fits the last failure rather than the trigger's."""

from __future__ import annotations

from pathlib import Path

import pytest

from keiri_agent.agents.convert.failure import fallback_failed, sentence
from keiri_agent.agents.convert.models import UnsupportedFormatError
from keiri_agent.agents.convert.verify import check_output, detect_format

TRIGGER = {"step": "convert", "error": UnsupportedFormatError("xml").to_dict()}


@pytest.mark.parametrize(
    ("last_error", "wrong", "answer", "turns", "in_hint"),
    [
        (
            "PolicyViolation: モジュール 'subprocess' の import は許可されていません。",
            [],
            None,
            3,
            "許可されていない操作",
        ),
        ("中断: CPU 時間の上限に達しました（120.00 秒）", [], None, 3, "サンドボックスの制限"),
        ("KeyError: '存在しない列'", [], None, 3, "最後のエラー"),
        (None, ["sales.csv: XML として読めません（内容は CSV です）"], None, 3, "XML の形"),
        (None, [], "この変換はできません。", 0, "コードを書かずに答えました"),
        (None, [], None, 0, "空の応答"),
    ],
)
def test_the_hint_fits_the_last_failure(
    last_error: str | None, wrong: list[str], answer: str | None, turns: int, in_hint: str
) -> None:
    error = fallback_failed(
        target="xml",
        reason="形式 'xml' には対応していません。（UnsupportedFormatError）",
        turns=turns,
        answer=answer,
        last_error=last_error,
        wrong_format=wrong,
        trigger=TRIGGER,
    )
    assert error.code == "CODE_EXECUTION_FAILED"  # not the trigger's UNSUPPORTED_FORMAT
    assert in_hint in error.hint
    assert "。。" not in error.message + error.hint
    assert "XML のファイルを作成できませんでした" in error.message
    assert error.details["trigger"] == TRIGGER


def test_sentence_ends_once() -> None:
    assert sentence("作れません。") == "作れません。"
    assert sentence("作れません") == "作れません。"
    assert sentence("理由（KeyError）") == "理由（KeyError）。"


@pytest.mark.parametrize(
    ("name", "data", "fmt", "problem"),
    [
        ("sales.xml", b"<rows><row><a>1</a></row></rows>", "xml", None),
        ("sales.xml", "月,売上\n4月,1\n".encode(), "xml", "内容は CSV です"),
        ("売上.csv", b"<rows/>", "xml", "拡張子が .csv"),
        ("sales.json", b'[{"a": 1}]', "json", None),
        ("sales.json", b"{'a': 1}", "json", "JSON として読めません"),
        ("sales.csv", "月,売上\n4月,1\n".encode("utf-8-sig"), "csv", None),
        ("sales.csv", b'[{"a": 1}]', "csv", "内容は JSON です"),
        ("chart.png", b"\x89PNG\r\n\x1a\n....", "png", None),
        ("chart.png", b"<svg xmlns='http://www.w3.org/2000/svg'/>", "png", "内容は SVG です"),
        ("sales.xlsx", b"a,b\n1,2\n", "excel", "Excel（.xlsx） として読めません"),
        ("empty.xml", b"", "xml", "空です"),
    ],
)
def test_outputs_are_checked_by_content_not_only_by_name(
    tmp_path: Path, name: str, data: bytes, fmt: str, problem: str | None
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    found = check_output(path, fmt)
    if problem is None:
        assert found == []
    else:
        assert any(problem in line for line in found), found


def test_detect_format_tells_xml_json_and_csv_apart() -> None:
    assert detect_format(b"<a/>") == "xml"
    assert detect_format(b'{"a": 1}') == "json"
    assert detect_format("月,売上\n4月,1\n".encode()) == "csv"
