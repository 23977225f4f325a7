"""A sandbox profile is chosen by name; an unknown name is refused with the names there are."""

from __future__ import annotations

import pytest

from keiri_agent.errors import BlockError, ErrorCode
from keiri_agent.sandbox.profiles import CODEACT, get_profile


def test_a_profile_is_found_by_its_name_or_given_as_it_is() -> None:
    assert get_profile("codeact") is CODEACT
    assert get_profile(CODEACT) is CODEACT


def test_an_unknown_profile_is_refused_listing_the_profiles() -> None:
    with pytest.raises(BlockError) as caught:
        get_profile("fast")
    assert caught.value.code == ErrorCode.INPUT_VALIDATION_FAILED
    assert caught.value.message == "サンドボックスのプロファイル 'fast' はありません。"
    assert caught.value.hint == "analysis / codeact のいずれかを指定してください。"
    assert caught.value.details == {"profile": "fast"}
