"""extract_text: every supported format, the limits, and files that are not what they claim."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import Workbook

from keiri_agent.documents.extract import PAGE_SEPARATOR, SUPPORTED_EXTENSIONS, extract_text
from keiri_agent.documents.limits import MAX_PDF_PAGES, MAX_TEXT_CHARS
from keiri_agent.errors import ErrorCode, FileProcessingError
from tests.documents.corpus import (
    KANGXI_NORMALIZED,
    Corpus,
    build_corpus,
    docx_bytes,
    japanese_pdf_bytes,
    page_sentence,
    xlsx_bytes,
)


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("documents"))


def _refused(source: Path | bytes, code: ErrorCode, **kwargs: object) -> FileProcessingError:
    with pytest.raises(FileProcessingError) as info:
        extract_text(source, **kwargs)  # type: ignore[arg-type]
    assert info.value.code == code, info.value
    return info.value


# --- PDF -----------------------------------------------------------------------------------


def test_pdf_pages_come_back_in_order_separated_by_form_feeds(corpus: Corpus) -> None:
    result = extract_text(corpus.pdf_3)

    assert (result.format, result.unit, result.units_read, result.units_total) == (
        "pdf",
        "page",
        3,
        3,
    )
    assert not result.truncated
    assert result.warnings == []
    pages = result.text.split(PAGE_SEPARATOR)
    assert len(pages) == 3
    for number, page in enumerate(pages, start=1):
        assert page_sentence(number) in page
    assert "123,000" in pages[0]  # the number table
    # Mixed text is NFKC-normalized: full-width ＡＢＣ and half-width ｶﾀｶﾅ.
    assert "Invoice No. 0001 請求書 ABC カタカナ" in pages[0]
    assert result.file == "報告書.pdf"
    assert result.metadata["pages"] == 3


def test_pdf_reads_only_the_first_20_of_25_pages_and_says_so(corpus: Corpus) -> None:
    result = extract_text(corpus.pdf_25)

    assert MAX_PDF_PAGES == 20
    assert (result.units_read, result.units_total) == (20, 25)
    assert result.truncated
    assert len(result.text.split(PAGE_SEPARATOR)) == 20
    assert page_sentence(20) in result.text
    assert page_sentence(21) not in result.text
    assert any("20 ページ" in w and "25 ページ" in w for w in result.warnings)


def test_pdf_page_limit_is_a_parameter(corpus: Corpus) -> None:
    result = extract_text(corpus.pdf_3, max_pages=2)

    assert (result.units_read, result.units_total, result.truncated) == (2, 3, True)
    assert page_sentence(3) not in result.text


def test_pdf_page_without_text_layer_is_reported(corpus: Corpus) -> None:
    result = extract_text(corpus.pdf_scan)

    assert "画像のみのページ（OCR 未対応）: p.2" in result.warnings
    assert result.metadata["image_only_pages"] == [2]
    pages = result.text.split(PAGE_SEPARATOR)
    assert page_sentence(1) in pages[0]
    assert pages[1] == ""
    assert page_sentence(3) in pages[2]


def test_pdf_without_any_text_layer_says_ocr_is_needed() -> None:
    result = extract_text(japanese_pdf_bytes(2, blank_pages=(1, 2)), name="scan.pdf")

    assert result.text == PAGE_SEPARATOR
    assert "画像のみのページ（OCR 未対応）: p.1, p.2" in result.warnings
    assert any("scan.pdf" in w and "OCR" in w for w in result.warnings[1:])


def test_pdf_written_in_kangxi_radicals_comes_out_as_ordinary_kanji(corpus: Corpus) -> None:
    result = extract_text(corpus.pdf_kangxi)

    assert KANGXI_NORMALIZED in result.text
    assert not any("\u2e80" <= ch <= "\u2fdf" for ch in result.text)


def test_encrypted_pdf_is_refused_with_a_hint_to_remove_the_password(corpus: Corpus) -> None:
    error = _refused(corpus.pdf_encrypted, ErrorCode.FILE_ENCRYPTED)

    assert "秘密.pdf" in error.message
    assert "パスワード" in error.hint
    assert error.details["file"] == "秘密.pdf"


def test_truncated_pdf_is_refused(corpus: Corpus) -> None:
    error = _refused(corpus.pdf_truncated, ErrorCode.FILE_UNREADABLE)

    assert "途中まで.pdf" in error.message
    assert "途中で切れ" in error.message


def test_truncated_pdf_with_an_end_marker_is_still_refused() -> None:
    data = japanese_pdf_bytes(3)
    damaged = data[: len(data) // 2] + b"\n%%EOF\n"  # passes the tail check, fails to parse

    error = _refused(damaged, ErrorCode.FILE_UNREADABLE, name="壊れた.pdf")
    assert "壊れた.pdf" in error.message


def test_html_saved_as_pdf_is_refused_naming_what_it_really_is(corpus: Corpus) -> None:
    error = _refused(corpus.html_as_pdf, ErrorCode.FILE_UNREADABLE)

    assert "ダウンロード.pdf" in error.message
    assert "HTML" in error.message
    assert error.details["detected"] == "html"
    assert error.hint


# --- Office --------------------------------------------------------------------------------


def test_docx_paragraphs_and_tables_in_document_order(corpus: Corpus) -> None:
    result = extract_text(corpus.docx)

    text = result.text
    assert result.format == "docx"
    order = [
        "経費精算規程",
        "第1条",
        "交通費の上限",
        "区分\t上限\t備考",
        "国内出張\t30,000円",
        "第2条",
    ]
    positions = [text.index(part) for part in order]
    assert positions == sorted(positions)
    assert text.count("交通費の上限") == 1  # a cell merged over three columns, written once
    assert result.metadata["tables"] == 1


def test_pptx_slides_in_order_with_tables_and_notes(corpus: Corpus) -> None:
    result = extract_text(corpus.pptx)

    assert (result.format, result.unit, result.units_read, result.units_total) == (
        "pptx",
        "slide",
        2,
        2,
    )
    first, second = result.text.split(PAGE_SEPARATOR)
    assert "月次決算の進め方" in first
    assert "締め日は毎月5営業日目です" in first  # NFKC: full-width digits would become 5
    assert "ノート: 発表者メモ: 遅延時は経理部長に報告" in first
    assert "部門別予算" in second
    assert "営業部\t12,000,000" in second


def test_xlsx_first_sheet_top_left_range_with_cached_values(corpus: Corpus) -> None:
    result = extract_text(corpus.xlsx)

    lines = result.text.split("\n")
    assert (result.format, result.unit, result.units_read, result.units_total) == (
        "xlsx",
        "sheet",
        1,
        2,
    )
    assert lines[0] == "2024年度 売上明細"  # merged B2:E2, not repeated; column A trimmed
    assert result.text.count("2024年度 売上明細") == 1
    assert "日付\t取引先\t金額\t備考" in lines
    assert "2024-04-01\t株式会社サンプル\t1500\t初回" in lines
    assert lines[-1] == "\t\t3500"  # the SUM formula shows Excel's cached value
    assert "読まれないシート" not in result.text
    assert result.metadata["sheet"] == "売上"
    assert any("メモ" in w and "全 2 シート" in w for w in result.warnings)
    # The second formula has no cached value: read as blank, and the user is told.
    assert result.metadata["formulas_without_value"] == 1
    assert any("数式のセル 1 個" in w for w in result.warnings)


def test_xlsx_without_any_cached_values_warns_for_each_formula() -> None:
    result = extract_text(xlsx_bytes(cached_total=None), name="未計算.xlsx")

    assert "3500" not in result.text
    assert any("数式のセル 2 個" in w for w in result.warnings)


def test_xlsx_with_a_hidden_first_sheet_gives_the_sheet_excel_opens_to() -> None:
    book = Workbook()
    settings = book.active
    settings.title = "設定"
    settings.append(["税率", 10])
    settings.sheet_state = "hidden"
    table = book.create_sheet("明細")
    table.append(["品目", "数量", "単価", "金額"])
    table.append(["用紙", 2, 100, "=B2*C2"])  # written by a program: no result saved
    buffer = io.BytesIO()
    book.save(buffer)

    result = extract_text(buffer.getvalue(), name="見積.xlsx")

    assert result.metadata["sheet"] == "明細"
    assert result.text.split("\n")[0] == "品目\t数量\t単価\t金額"
    assert "税率" not in result.text
    assert any("非表示のシート「設定」は飛ばしました" in w for w in result.warnings)
    # The formula's missing result is counted on the sheet read, not on the hidden one.
    assert result.metadata["formulas_without_value"] == 1


def test_xlsx_that_is_really_text_is_refused(corpus: Corpus) -> None:
    error = _refused(corpus.text_as_xlsx, ErrorCode.FILE_UNREADABLE)

    assert "売上.xlsx" in error.message
    assert "テキスト" in error.message
    assert ".csv" in error.hint


def test_docx_that_is_really_a_workbook_is_refused(corpus: Corpus) -> None:
    error = _refused(corpus.xlsx_as_docx, ErrorCode.FILE_UNREADABLE)

    assert "Excel" in error.message
    assert ".xlsx" in error.hint


def test_truncated_docx_is_refused() -> None:
    data = docx_bytes()

    error = _refused(data[: len(data) // 2], ErrorCode.FILE_UNREADABLE, name="途中.docx")
    assert "途中.docx" in error.message
    assert "壊れた" in error.message


def test_password_protected_office_file_is_refused_as_encrypted() -> None:
    # Encrypted OOXML is an OLE compound file holding an "EncryptedPackage" stream.
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504
    encrypted = ole + "EncryptedPackage".encode("utf-16-le") + b"\x00" * 64

    error = _refused(encrypted, ErrorCode.FILE_ENCRYPTED, name="給与.xlsx")
    assert "給与.xlsx" in error.message
    legacy = _refused(ole, ErrorCode.FILE_UNREADABLE, name="古い.xlsx")
    assert "旧形式" in legacy.message


# --- text files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("attribute", "encoding", "fmt"),
    [
        ("utf8_bom_txt", "utf-8-sig", "txt"),
        ("cp932_csv", "cp932", "csv"),
        ("euc_jp_txt", "euc-jp", "txt"),
    ],
)
def test_japanese_text_files_in_each_encoding(
    corpus: Corpus, attribute: str, encoding: str, fmt: str
) -> None:
    result = extract_text(getattr(corpus, attribute))

    assert result.metadata["encoding"] == encoding
    assert result.format == fmt
    assert result.text.startswith("請求書番号: INV-2024-001\n")  # no BOM left
    assert "取引先: 株式会社サンプル商事" in result.text
    assert "1,234,567円(税込)" in result.text  # full-width parentheses normalized


def test_text_is_cut_at_100000_characters_with_a_warning(corpus: Corpus) -> None:
    result = extract_text(corpus.big_txt)

    assert len(result.text) == MAX_TEXT_CHARS == 100_000
    assert result.truncated
    assert result.metadata["chars_total"] == 124_000
    assert any("100,000" in w for w in result.warnings)


def test_character_limit_is_a_parameter(corpus: Corpus) -> None:
    result = extract_text(corpus.pdf_3, max_chars=50)

    assert len(result.text) == 50
    assert result.truncated
    assert result.units_read == 3


def test_text_is_normalized() -> None:
    result = extract_text("⽇本\u3000ＡＢＣ\r\nｶﾅ\x07\u200b".encode(), name="memo.md")

    assert result.text == "日本 ABC\nカナ"
    assert result.format == "md"


# --- refusals before parsing -----------------------------------------------------------------


def test_empty_file_is_refused(corpus: Corpus) -> None:
    error = _refused(corpus.empty_txt, ErrorCode.FILE_UNREADABLE)

    assert "空.txt" in error.message
    assert "空のファイル" in error.message


def test_unknown_extension_lists_the_supported_ones(corpus: Corpus) -> None:
    error = _refused(corpus.unknown_ext, ErrorCode.UNSUPPORTED_FORMAT)

    assert "設計図.dwg" in error.message
    for extension in (".pdf", ".docx", ".xlsx", ".pptx", ".txt", ".csv"):
        assert extension in error.message
    assert error.details["supported"] == list(SUPPORTED_EXTENSIONS)


def test_file_over_the_size_limit_is_refused_unread(corpus: Corpus) -> None:
    error = _refused(corpus.pdf_3, ErrorCode.FILE_TOO_LARGE, max_bytes=1_000)

    assert "報告書.pdf" in error.message
    assert error.details["limit"] == 1_000
    _refused(b"x" * 2_000, ErrorCode.FILE_TOO_LARGE, name="a.txt", max_bytes=1_000)


def test_missing_file_is_refused(tmp_path: Path) -> None:
    error = _refused(tmp_path / "ない.pdf", ErrorCode.FILE_UNREADABLE)

    assert "ない.pdf" in error.message


def test_bytes_without_a_name_are_typed_by_content() -> None:
    result = extract_text(japanese_pdf_bytes(1))

    assert result.format == "pdf"
    assert page_sentence(1) in result.text


def test_the_product_imports_only_pypdfium2(corpus: Corpus) -> None:
    code = (
        "import sys\n"
        "from keiri_agent.documents.extract import extract_text\n"
        f"extract_text({str(corpus.pdf_3)!r})\n"
        "print(sorted(m for m in ('pypdf', 'pdfminer', 'pypdfium2') if m in sys.modules))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout

    assert output.strip() == "['pypdfium2']"


def test_pdfs_extracted_from_many_threads_at_once_stay_correct(corpus: Corpus) -> None:
    # PDFium is not thread-safe; plan nodes run in threads, so the reader must serialize it.
    from concurrent.futures import ThreadPoolExecutor

    expected = extract_text(corpus.pdf_25).text
    with ThreadPoolExecutor(max_workers=8) as pool:
        texts = list(pool.map(lambda _: extract_text(corpus.pdf_25).text, range(16)))
    assert texts == [expected] * 16
