"""Times as people read them: a stored UTC time in the zone of KEIRI_TIMEZONE, labelled, and
the setting that names the zone (an unknown name is a Japanese configuration error)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from keiri_agent.config import DEFAULT_TIMEZONE, load_settings
from keiri_agent.errors import ConfigurationError, ErrorCode
from keiri_agent.localtime import parse_stamp, shown_time, to_utc, utc_text

TOKYO = ZoneInfo("Asia/Tokyo")
NEW_YORK = ZoneInfo("America/New_York")


def test_a_utc_time_is_shown_in_tokyo_with_its_label() -> None:
    stamp = datetime(2026, 12, 6, 3, 15, 0, tzinfo=UTC)
    assert shown_time(stamp, TOKYO) == "2026-12-06 12:15:00 JST"
    assert shown_time(stamp, TOKYO, seconds=False) == "2026-12-06 12:15 JST"


def test_the_date_changes_across_midnight() -> None:
    """15:30 UTC is already the next day in Tokyo, and still the day before in New York at 03:00."""
    assert shown_time("2026-12-06T15:30:00Z", TOKYO) == "2026-12-07 00:30:00 JST"
    assert shown_time("2026-12-07T03:00:00Z", NEW_YORK) == "2026-12-06 22:00:00 EST"


def test_daylight_saving_time_changes_the_offset_and_the_label() -> None:
    winter = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    summer = datetime(2026, 7, 15, 12, 0, tzinfo=UTC)
    assert shown_time(winter, NEW_YORK) == "2026-01-15 07:00:00 EST"
    assert shown_time(summer, NEW_YORK) == "2026-07-15 08:00:00 EDT"
    # 2026-03-08 02:00 EST the clocks jump to 03:00 EDT: a minute apart in UTC, an hour on the wall.
    before = datetime(2026, 3, 8, 6, 59, tzinfo=UTC)
    assert shown_time(before, NEW_YORK) == "2026-03-08 01:59:00 EST"
    assert shown_time(before + timedelta(minutes=1), NEW_YORK) == "2026-03-08 03:00:00 EDT"


def test_every_stored_form_is_read_as_the_same_instant() -> None:
    expected = "2026-12-06 12:15:00 JST"
    instant = datetime(2026, 12, 6, 3, 15, tzinfo=UTC)
    assert shown_time("2026-12-06T03:15:00.123Z", TOKYO) == expected  # task records
    assert shown_time("2026-12-06T03:15:00+00:00", TOKYO) == expected  # isoformat()
    assert shown_time(instant.timestamp(), TOKYO) == expected  # a file's mtime
    other = instant.astimezone(timezone(timedelta(hours=-5)))
    assert shown_time(other, TOKYO) == expected  # an aware time in any zone


def test_a_zone_without_an_abbreviation_is_labelled_by_its_offset() -> None:
    stamp = datetime(2026, 12, 6, 3, 15, tzinfo=UTC)
    assert shown_time(stamp, ZoneInfo("Asia/Dubai")) == "2026-12-06 07:15:00 UTC+04:00"
    assert shown_time(stamp, ZoneInfo("Asia/Kathmandu")) == "2026-12-06 09:00:00 UTC+05:45"
    assert shown_time(stamp, ZoneInfo("America/Sao_Paulo")) == "2026-12-06 00:15:00 UTC-03:00"
    assert shown_time(stamp, ZoneInfo("UTC")) == "2026-12-06 03:15:00 UTC"


def test_a_time_without_a_zone_is_refused_not_guessed() -> None:
    with pytest.raises(ValueError, match="without a zone"):
        shown_time(datetime(2026, 12, 6, 3, 15), TOKYO)
    with pytest.raises(ValueError, match="without a zone"):
        to_utc("2026-12-06T03:15:00")


def test_stored_text_is_utc_with_z_whatever_zone_the_time_was_in() -> None:
    noon_in_tokyo = datetime(2026, 12, 6, 12, 15, 0, tzinfo=TOKYO)
    assert utc_text(noon_in_tokyo) == "2026-12-06T03:15:00Z"
    assert utc_text(noon_in_tokyo, timespec="milliseconds") == "2026-12-06T03:15:00.000Z"
    assert utc_text(noon_in_tokyo.timestamp()) == "2026-12-06T03:15:00Z"
    with pytest.raises(ValueError, match="without a zone"):
        utc_text(datetime(2026, 12, 6, 3, 15))


def test_stamps_in_names_are_read_as_utc() -> None:
    when = parse_stamp("20261206031500-2", "%Y%m%d%H%M%S")
    assert when == datetime(2026, 12, 6, 3, 15, tzinfo=UTC)
    assert parse_stamp("20261206T031500Z-3", "%Y%m%dT%H%M%SZ") == when
    assert parse_stamp("tasks", "%Y%m%d%H%M%S") is None
    assert parse_stamp("2026120603150", "%Y%m%d%H%M%S") is None  # one digit short


def test_the_setting_defaults_to_tokyo_and_takes_any_iana_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().keiri_timezone == ZoneInfo(DEFAULT_TIMEZONE) == TOKYO
    monkeypatch.setenv("KEIRI_TIMEZONE", "America/New_York")
    assert load_settings().keiri_timezone == NEW_YORK
    monkeypatch.setenv("KEIRI_TIMEZONE", " ")  # blank is unset
    assert load_settings().keiri_timezone == TOKYO


@pytest.mark.parametrize("name", ["Asia/Tokio", "JST", "asia/tokyo", "Asia", "/etc/localtime"])
def test_an_unknown_zone_is_a_japanese_configuration_error(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("KEIRI_TIMEZONE", name)
    with pytest.raises(ConfigurationError) as info:
        load_settings()
    error = info.value
    assert error.code == ErrorCode.CONFIGURATION_ERROR
    assert "KEIRI_TIMEZONE" in error.details["invalid"]
    assert f"KEIRI_TIMEZONE: '{name}' は IANA のタイムゾーン名として見つかりません" in error.message
    assert "Asia/Tokyo" in error.message  # what to write instead
    assert "README の設定表" in (error.hint or "")
