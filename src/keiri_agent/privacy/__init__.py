"""Personal data kept from language models and logs (issue 37; 個人情報保護法).

Detection (``detect``: identifiers by form in ``patterns``, values by label or column header in
``headers``, a column written down the page by ``page_lists``, names by SudachiPy in ``names``, in kana its tags miss in ``kana_names``, where its tags
mislead in ``name_context``, in roman letters in ``romaji`` and beside a bank's word in
``bank_payers``), the job's placeholders (``vault``), the job they
live for (``scope``), the product's own pieces of a request, never masked (``ours``: marked
where the request is written), JSON masked as JSON (``structured``: tool-call arguments stay valid for
their schema) and the mask the logs use (``logmask``). The LLM layer
(``keiri_agent.llm.masking``) masks every prompt with the job's vault and restores the replies;
the events layer masks every logged line with :class:`LogMask`.
"""

from __future__ import annotations

from keiri_agent.privacy.detect import find_personal
from keiri_agent.privacy.headers import header_kind
from keiri_agent.privacy.kinds import LABELS, PersonalKind, Span, masking_status
from keiri_agent.privacy.logmask import LogMask, mask_log_line
from keiri_agent.privacy.ours import Ours, compose, fill, join, mask_theirs, split_ours
from keiri_agent.privacy.scope import current_vault, job_scope, learn_tables
from keiri_agent.privacy.structured import mask_json_text, mask_structured
from keiri_agent.privacy.vault import Masked, Vault

__all__ = [
    "LABELS",
    "LogMask",
    "Masked",
    "Ours",
    "PersonalKind",
    "Span",
    "Vault",
    "compose",
    "current_vault",
    "fill",
    "find_personal",
    "header_kind",
    "job_scope",
    "join",
    "learn_tables",
    "mask_json_text",
    "mask_log_line",
    "mask_structured",
    "mask_theirs",
    "masking_status",
    "split_ours",
]
