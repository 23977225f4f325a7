"""fetch_sources: local files and folders, and S3 through moto's server (with injected faults)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import boto3
import pytest

from keiri_agent.agents.convert.fetch import fetch_sources, safe_relative_name
from keiri_agent.agents.convert.models import FetchError
from keiri_agent.agents.convert.s3 import make_s3_client
from keiri_agent.config import load_settings
from keiri_agent.errors import ErrorCode
from keiri_agent.file_access import FileAccess
from tests.agents.convert.conftest import FaultProxy

CSV = "部門,売上\n営業部,1200\n経理部,3400\n".encode()


def _put(admin: Any, bucket: str, key: str, body: bytes = CSV) -> None:
    admin.put_object(Bucket=bucket, Key=key, Body=body)


# --- local -------------------------------------------------------------------------------


def test_local_file_is_copied_into_dest(tmp_path: Path) -> None:
    source = tmp_path / "in" / "売上.csv"
    source.parent.mkdir()
    source.write_bytes(CSV)
    fetched = fetch_sources(str(source), dest_dir=tmp_path / "run", max_bytes=10_000)
    assert [f.name for f in fetched] == ["売上.csv"]
    assert fetched[0].path == tmp_path / "run" / "売上.csv"
    assert fetched[0].path.read_bytes() == CSV
    assert fetched[0].size == len(CSV)
    assert source.read_bytes() == CSV  # the original is untouched


def test_local_folder_with_patterns(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    (folder / "2024").mkdir(parents=True)
    (folder / "a.csv").write_bytes(CSV)
    (folder / "2024" / "b.CSV").write_bytes(CSV)
    (folder / "memo.txt").write_text("メモ", encoding="utf-8")
    (folder / ".hidden.csv").write_bytes(CSV)
    (folder / "~$book.xlsx").write_bytes(b"lock")
    fetched = fetch_sources(
        str(folder), dest_dir=tmp_path / "run", files=["*.csv"], max_bytes=10_000
    )
    assert sorted(f.name for f in fetched) == ["2024/b.CSV", "a.csv"]
    everything = fetch_sources(str(folder), dest_dir=tmp_path / "run2", max_bytes=10_000)
    assert sorted(f.name for f in everything) == ["2024/b.CSV", "a.csv", "memo.txt"]


def test_missing_path_and_unmatched_pattern_are_errors(tmp_path: Path) -> None:
    with pytest.raises(FetchError) as missing:
        fetch_sources(str(tmp_path / "ない.csv"), dest_dir=tmp_path / "run", max_bytes=10_000)
    assert missing.value.code == ErrorCode.FILE_UNREADABLE
    assert "見つかりません" in missing.value.message
    assert missing.value.hint
    (tmp_path / "a.csv").write_bytes(CSV)
    with pytest.raises(FetchError) as unmatched:
        fetch_sources(
            str(tmp_path), dest_dir=tmp_path / "run", files=["a.csv", "b.csv"], max_bytes=10_000
        )
    assert unmatched.value.details["unmatched"] == ["b.csv"]
    assert not (
        tmp_path / "run" / "a.csv"
    ).exists()  # nothing fetched when the request is incomplete


def test_local_limits_and_confinement(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "a.csv").write_bytes(CSV)
    (folder / "b.csv").write_bytes(CSV)
    with pytest.raises(FetchError) as too_big:
        fetch_sources(str(folder), dest_dir=tmp_path / "run", max_bytes=len(CSV) + 1)
    assert too_big.value.code == ErrorCode.FILE_TOO_LARGE
    assert not any((tmp_path / "run").iterdir())
    with pytest.raises(FetchError) as too_many:
        fetch_sources(str(folder), dest_dir=tmp_path / "run", max_files=1, max_bytes=10_000)
    assert too_many.value.code == ErrorCode.FILE_TOO_LARGE
    outside = tmp_path / "secret.csv"
    outside.write_bytes(CSV)
    os.symlink(outside, folder / "link.csv")
    with pytest.raises(FetchError) as link:
        fetch_sources(str(folder), dest_dir=tmp_path / "run", files=["link.csv"], max_bytes=10_000)
    assert link.value.code == ErrorCode.PERMISSION_DENIED
    with pytest.raises(FetchError) as escaped:
        fetch_sources(
            str(outside),
            dest_dir=tmp_path / "run",
            access=FileAccess.confined(search=[folder]),
            max_bytes=10_000,
        )
    assert escaped.value.code == ErrorCode.PERMISSION_DENIED
    assert str(folder) not in escaped.value.message + escaped.value.hint  # no server folders


def test_safe_relative_name() -> None:
    assert safe_relative_name("../../etc/passwd") == "etc/passwd"
    assert safe_relative_name("a/./b//c.csv") == "a/b/c.csv"
    assert safe_relative_name("..\\..\\x.csv") == "x.csv"
    assert safe_relative_name("bad\x00name.csv") == "bad_name.csv"
    assert safe_relative_name("..") == "unnamed"
    assert len(safe_relative_name("長" * 300 + ".csv").encode()) <= 200


def test_unsupported_scheme(tmp_path: Path) -> None:
    with pytest.raises(FetchError) as info:
        fetch_sources("https://example.com/a.csv", dest_dir=tmp_path, max_bytes=10)
    assert info.value.code == ErrorCode.INPUT_VALIDATION_FAILED


# --- S3 ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("s3_env")
def test_s3_object(tmp_path: Path, s3_admin: Any, s3_bucket: str) -> None:
    _put(s3_admin, s3_bucket, "2024/売上.csv")
    _put(s3_admin, s3_bucket, "2024/売上.csv.bak")
    logs: list[str] = []
    fetched = fetch_sources(f"s3://{s3_bucket}/2024/売上.csv", dest_dir=tmp_path, log=logs.append)
    assert [(f.name, f.source) for f in fetched] == [
        ("売上.csv", f"s3://{s3_bucket}/2024/売上.csv")
    ]
    assert fetched[0].path.read_bytes() == CSV
    assert any("1 件" in line for line in logs)


@pytest.mark.usefixtures("s3_env")
def test_s3_prefix_with_pagination(
    tmp_path: Path, s3_admin: Any, s3_bucket: str, s3_proxy: FaultProxy
) -> None:
    for n in range(5):
        _put(s3_admin, s3_bucket, f"441/data_{n}.csv")
    _put(s3_admin, s3_bucket, "441/notes.txt", "メモ".encode())
    _put(s3_admin, s3_bucket, "441/sub/")  # a folder marker
    _put(s3_admin, s3_bucket, "4410/other.csv")  # same characters, another folder
    fetched = fetch_sources(
        f"s3://{s3_bucket}/441", dest_dir=tmp_path, files=["*.csv"], page_size=2
    )
    assert sorted(f.name for f in fetched) == [f"data_{n}.csv" for n in range(5)]
    assert all(f.path.read_bytes() == CSV for f in fetched)
    assert s3_proxy.count("list-type=2") >= 3  # 6 keys at 2 per page


@pytest.mark.usefixtures("s3_env")
def test_s3_size_limit_refused_before_download(
    tmp_path: Path, s3_admin: Any, s3_bucket: str, s3_proxy: FaultProxy
) -> None:
    _put(s3_admin, s3_bucket, "big/a.csv", b"x" * 600)
    _put(s3_admin, s3_bucket, "big/b.csv", b"x" * 600)
    with pytest.raises(FetchError) as info:
        fetch_sources(f"s3://{s3_bucket}/big/", dest_dir=tmp_path / "run", max_bytes=1000)
    assert info.value.code == ErrorCode.FILE_TOO_LARGE
    assert info.value.details["bytes"] == 1200
    assert s3_proxy.count(f"GET /{s3_bucket}/big/a.csv") == 0  # nothing was downloaded
    assert not any((tmp_path / "run").iterdir())


@pytest.mark.usefixtures("s3_env")
def test_s3_limit_from_settings(
    tmp_path: Path, s3_admin: Any, s3_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEIRI_CONVERT_MAX_BYTES", "10")
    _put(s3_admin, s3_bucket, "a.csv")
    with pytest.raises(FetchError) as info:
        fetch_sources(f"s3://{s3_bucket}/", dest_dir=tmp_path)
    assert info.value.details["limit"] == 10


@pytest.mark.usefixtures("s3_env")
def test_s3_traversal_keys_are_sanitised(tmp_path: Path, s3_admin: Any, s3_bucket: str) -> None:
    _put(s3_admin, s3_bucket, "in/../evil.csv", b"evil")
    _put(s3_admin, s3_bucket, "in/evil.csv", b"plain")
    dest = tmp_path / "run"
    fetched = fetch_sources(f"s3://{s3_bucket}/in/", dest_dir=dest)
    names = sorted(f.name for f in fetched)
    assert names == ["evil-2.csv", "evil.csv"]
    for item in fetched:
        assert item.path.resolve().is_relative_to(dest.resolve())
    assert not (tmp_path / "evil.csv").exists()
    assert {f.path.read_bytes() for f in fetched} == {b"evil", b"plain"}


@pytest.mark.usefixtures("s3_env")
def test_s3_transient_failures_are_retried(
    tmp_path: Path, s3_admin: Any, s3_bucket: str, s3_proxy: FaultProxy
) -> None:
    _put(s3_admin, s3_bucket, "r/a.csv")
    s3_proxy.fail(2, status=500, code="InternalError", match=f"GET /{s3_bucket}/r/a.csv")
    s3_proxy.fail(1, status=503, code="SlowDown", match="list-type=2")
    s3_proxy.drop(1, match=f"GET /{s3_bucket}/r/a.csv")
    logs: list[str] = []
    fetched = fetch_sources(f"s3://{s3_bucket}/r/", dest_dir=tmp_path, backoff_s=0, log=logs.append)
    assert fetched[0].path.read_bytes() == CSV
    assert s3_proxy.count(f"GET /{s3_bucket}/r/a.csv") == 4  # 500, 500, dropped, then success
    assert s3_proxy.count("list-type=2") == 2
    assert sum("再試行" in line for line in logs) == 4


@pytest.mark.usefixtures("s3_env")
def test_s3_persistent_5xx_fails_after_three_retries(
    tmp_path: Path, s3_admin: Any, s3_bucket: str, s3_proxy: FaultProxy
) -> None:
    _put(s3_admin, s3_bucket, "p/a.csv")
    _put(s3_admin, s3_bucket, "p/b.csv")
    s3_proxy.fail(-1, status=500, match=f"GET /{s3_bucket}/p/b.csv")
    with pytest.raises(FetchError) as info:
        fetch_sources(f"s3://{s3_bucket}/p/", dest_dir=tmp_path / "run", backoff_s=0)
    error = info.value
    assert error.transient
    assert error.recoverable
    assert error.attempts == 4
    assert error.details["attempts"] == 4
    assert error.details["source"] == f"s3://{s3_bucket}/p/"
    assert error.code == ErrorCode.API_ERROR
    assert "4 回失敗" in error.message
    assert error.hint
    assert s3_proxy.count(f"GET /{s3_bucket}/p/b.csv") == 4
    assert not any((tmp_path / "run").iterdir())  # a.csv was removed again


@pytest.mark.usefixtures("s3_env")
def test_s3_4xx_fails_fast(
    tmp_path: Path, s3_admin: Any, s3_bucket: str, s3_proxy: FaultProxy
) -> None:
    with pytest.raises(FetchError) as missing:
        fetch_sources("s3://keiri-no-such-bucket-xyz/a/", dest_dir=tmp_path, backoff_s=0)
    assert missing.value.attempts == 1
    assert not missing.value.transient
    assert "keiri-no-such-bucket-xyz" in missing.value.message
    assert "見つかりません" in missing.value.message
    assert s3_proxy.count("keiri-no-such-bucket-xyz") == 1
    _put(s3_admin, s3_bucket, "d/a.csv")
    s3_proxy.fail(-1, status=403, code="AccessDenied", match=f"/{s3_bucket}")
    with pytest.raises(FetchError) as denied:
        fetch_sources(f"s3://{s3_bucket}/d/", dest_dir=tmp_path, backoff_s=0)
    assert denied.value.code == ErrorCode.PERMISSION_DENIED
    assert "拒否" in denied.value.message
    assert "AWS_ACCESS_KEY_ID" in denied.value.hint
    assert s3_proxy.count(f"/{s3_bucket}") == 1


def test_s3_unreachable_endpoint_is_transient(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("KEIRI_S3_ENDPOINT_URL", "http://127.0.0.1:9")  # discard port: refused
    with pytest.raises(FetchError) as info:
        fetch_sources("s3://bucket/prefix/", dest_dir=tmp_path, backoff_s=0, retries=2)
    assert info.value.transient
    assert info.value.attempts == 3
    assert "接続できません" in info.value.message
    assert "KEIRI_S3_ENDPOINT_URL" in info.value.hint


def test_s3_missing_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, s3_env: str
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    with pytest.raises(FetchError) as info:
        fetch_sources("s3://bucket/prefix/", dest_dir=tmp_path)
    assert info.value.code == ErrorCode.CONFIGURATION_ERROR
    assert "AWS_ACCESS_KEY_ID" in info.value.hint


def test_injected_client_is_used(
    tmp_path: Path, s3_server: str, s3_admin: Any, s3_bucket: str
) -> None:
    _put(s3_admin, s3_bucket, "x/a.csv")
    client = boto3.client(
        "s3",
        endpoint_url=s3_server,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    fetched = fetch_sources(
        f"s3://{s3_bucket}/x/", dest_dir=tmp_path, s3_client=client, max_bytes=1000
    )
    assert [f.name for f in fetched] == ["a.csv"]


def test_client_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEIRI_S3_ENDPOINT_URL", "http://minio.local:9000")
    monkeypatch.setenv("KEIRI_S3_REGION", "ap-northeast-1")
    client = make_s3_client(load_settings())
    assert client.meta.endpoint_url == "http://minio.local:9000"
    assert client.meta.region_name == "ap-northeast-1"
    assert client.meta.config.s3["addressing_style"] == "path"
    assert client.meta.config.retries["total_max_attempts"] == 1
    monkeypatch.setenv("KEIRI_S3_ENDPOINT_URL", " ")
    assert load_settings().keiri_s3_endpoint_url is None


# --- S3 places a confined access may read (KEIRI_S3_ALLOWED_BUCKETS) ------------------------


@pytest.mark.usefixtures("s3_env")
def test_s3_confined_to_allowed_places(
    tmp_path: Path, s3_admin: Any, s3_bucket: str, s3_proxy: FaultProxy
) -> None:
    _put(s3_admin, s3_bucket, "2024/売上.csv")
    _put(s3_admin, s3_bucket, "2024-secret/給与.csv", b"secret")
    _put(s3_admin, s3_bucket, "top.csv", b"secret")
    access = FileAccess.confined(search=(), s3=(f"{s3_bucket}/2024",))
    fetched = fetch_sources(f"s3://{s3_bucket}/2024/", dest_dir=tmp_path / "ok", access=access)
    assert [f.name for f in fetched] == ["売上.csv"]  # inside the allowed prefix: read
    s3_proxy.reset()
    refused = [
        f"s3://{s3_bucket}/",  # the whole bucket
        f"s3://{s3_bucket}/top.csv",
        f"s3://{s3_bucket}/2024-secret/",  # a key that only starts like the prefix
        f"s3://{s3_bucket}/2024/../top.csv",
        "s3://other-bucket/2024/売上.csv",
    ]
    for url in refused:
        with pytest.raises(FetchError) as info:
            fetch_sources(url, dest_dir=tmp_path / "no", access=access)
        assert info.value.code == ErrorCode.PERMISSION_DENIED, url
        assert info.value.message.startswith("source のパス「s3://"), info.value.message
        assert "KEIRI_S3_ALLOWED_BUCKETS" in (info.value.hint or "")
    assert s3_proxy.requests == []  # decided by the URL alone: S3 was never asked
    assert not (tmp_path / "no").exists() or not any((tmp_path / "no").iterdir())
    # Unrestricted (the CLI, run by the operator): any bucket, as before.
    fetched = fetch_sources(f"s3://{s3_bucket}/top.csv", dest_dir=tmp_path / "cli")
    assert [f.path.read_bytes() for f in fetched] == [b"secret"]
