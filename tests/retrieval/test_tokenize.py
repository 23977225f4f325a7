"""The Japanese tokenizer: compounds and their parts, NFKC, codes kept whole, threads."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from keiri_agent.retrieval.tokenize import (
    MAX_CHUNK_CHARS,
    JapaneseTokenizer,
    get_tokenizer,
    tokenize,
    tokenize_many,
)


def test_compound_words_are_kept_whole_and_also_split_into_their_parts() -> None:
    terms = tokenize("請求書と入金明細を照合して一覧表にする")
    assert {"請求書", "請求", "書", "一覧表", "一覧", "表", "入金", "明細", "照合"} <= set(terms)


def test_a_query_word_finds_the_compound_that_contains_it() -> None:
    # "請求" in a query must meet "請求書" in a document: both carry the term 請求.
    assert "請求" in tokenize("請求書")
    assert "取引先" in tokenize("取引先マスタ")


def test_particles_auxiliaries_symbols_and_light_words_are_dropped() -> None:
    terms = tokenize("請求書を確認してください。また、差異は「一覧」にします！")
    for dropped in ("を", "て", "は", "に", "。", "、", "「", "」", "！", "ます", "為る", "下さる"):
        assert dropped not in terms
    assert {"請求書", "確認", "差異", "一覧"} <= set(terms)


def test_normalized_forms_unify_spelling_variants() -> None:
    assert tokenize("売上") == tokenize("売り上げ")
    assert tokenize("マスタ") == tokenize("マスター")


def test_full_width_text_is_nfkc_normalized_and_lower_cased() -> None:
    assert tokenize("ＸＹＺ－３００の設定") == tokenize("xyz-300の設定")
    assert "pdf" in tokenize("ＰＤＦ")


def test_codes_are_emitted_whole_as_well_as_in_pieces() -> None:
    terms = tokenize(
        "エラーコード E-1024 が XYZ-300 で出た。ai.process_llm と INV-2025-001、abc123"
    )
    assert {"e-1024", "xyz-300", "ai.process_llm", "inv-2025-001", "abc123"} <= set(terms)
    assert {"e", "1024", "xyz", "300", "ai", "process", "llm"} <= set(terms)
    # ASCII words keep their spelling (Sudachi's normalized form of "process" is katakana).
    assert "プロセス" not in terms


def test_empty_and_symbol_only_text_have_no_terms() -> None:
    assert tokenize("") == []
    assert tokenize("　、。！？・") == []


def test_text_longer_than_sudachis_input_limit_is_tokenized_in_pieces() -> None:
    sentence = "請求書を確認する。"
    text = sentence * (3 * MAX_CHUNK_CHARS // len(sentence))  # ~108 KB of UTF-8
    terms = tokenize(text)
    assert terms.count("請求書") == text.count("請求書")
    unbroken = "請求" * MAX_CHUNK_CHARS  # no sentence end or space to cut at
    assert len(tokenize(unbroken)) >= MAX_CHUNK_CHARS


def test_batch_tokenization_matches_one_by_one() -> None:
    texts = ["入金消込", "月次売上の集計", "", "E-1024"]
    assert tokenize_many(texts) == [tokenize(text) for text in texts]


def test_one_tokenizer_is_safe_to_share_between_threads() -> None:
    texts = [
        f"{i} 件目: 請求書と入金明細を突合し、差異を報告書にまとめる。" * 20 for i in range(64)
    ]
    expected = [tokenize(text) for text in texts]
    shared = get_tokenizer()
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(shared.tokenize, texts))
    assert results == expected


def test_the_process_wide_tokenizer_is_built_once_and_names_its_dictionary() -> None:
    assert get_tokenizer() is get_tokenizer()
    signature = JapaneseTokenizer().signature
    assert "sudachidict_core" in signature
    assert "rules-" in signature
