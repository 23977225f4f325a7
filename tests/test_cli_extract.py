"""`keiri-agent extract`: per-file text or JSON; one bad file does not hide the others."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from keiri_agent.cli import app

runner = CliRunner()


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    good = tmp_path / "memo.txt"
    good.write_bytes("経費精算の締め日は毎月25日です。\n".encode("cp932"))
    fake = tmp_path / "invoice.pdf"
    fake.write_text("<!DOCTYPE html><html><body>請求書</body></html>", encoding="utf-8")
    missing = tmp_path / "none.docx"
    return good, fake, missing


def test_text_output_and_exit_status(tmp_path: Path) -> None:
    good, fake, _ = _files(tmp_path)
    result = runner.invoke(app, ["extract", str(good)])
    assert result.exit_code == 0, result.output
    assert "経費精算の締め日は毎月25日です。" in result.output

    result = runner.invoke(app, ["extract", str(good), str(fake)])
    assert result.exit_code == 1
    assert "経費精算" in result.output  # the good file still comes out
    assert "invoice.pdf" in result.output
    assert "Traceback" not in result.output


def test_json_output_has_an_entry_per_file(tmp_path: Path) -> None:
    good, fake, missing = _files(tmp_path)
    result = runner.invoke(app, ["extract", "--json", str(good), str(fake), str(missing)])
    assert result.exit_code == 1
    entries = json.loads(result.stdout)
    assert [Path(e["file"]).name for e in entries] == ["memo.txt", "invoice.pdf", "none.docx"]
    ok, bad, gone = entries
    assert ok["error"] is None
    assert ok["chars"] >= len("経費精算の締め日は毎月25日です。")
    assert ok["truncated"] is False
    assert ok["pages_or_sheets"] == 1
    assert bad["error"]["code"] == "FILE_UNREADABLE"
    assert "HTML" in bad["error"]["message"]
    assert bad["error"]["hint"]
    assert gone["error"]["code"] in {"FILE_UNREADABLE", "INPUT_VALIDATION_FAILED"}


def test_every_json_entry_has_the_same_keys_null_where_unknown(tmp_path: Path) -> None:
    """A script reads each entry the same way: a file that failed has every key a read one has,
    its format and unit null."""
    good, fake, missing = _files(tmp_path)
    result = runner.invoke(app, ["extract", "--json", str(good), str(fake), str(missing)])
    ok, bad, gone = json.loads(result.stdout)
    assert list(bad) == list(gone) == list(ok)
    assert (ok["format"], ok["unit"]) == ("txt", "file")
    for failed in (bad, gone):
        assert failed["format"] is None
        assert failed["unit"] is None
        assert (failed["chars"], failed["pages_or_sheets"], failed["warnings"]) == (0, 0, [])
