"""The 設計 page (seed 004 「UI 仕様（Designタブ）」), one module per idea: ``page`` (the page:
instruction → 自動生成 → design chat → 検証/ドライラン → 登録), ``state`` (its Session State keys and
the widget values kept across page switches), ``inputs`` (the document uploader and the
template picker), ``candidates`` (the Top-K candidate blocks), ``generation`` (the chat turns,
how a generation came about, what is still missing), ``check`` (a 検証/ドライラン and the plan's
graph) and ``versions`` (版と承認).

Importing this package imports none of them (the navigation imports ``page`` when the page is
first shown).
"""
