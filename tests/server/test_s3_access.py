"""S3 sources of server tasks (issue 33's follow-up): a conversion task reads S3 with the
server's own credentials, so it may read only the buckets or bucket prefixes the operator names
(``KEIRI_S3_ALLOWED_BUCKETS``; none by default). Anything else is refused at the door with the
403 of the path confinement -- naming the input, the setting in the hint -- before S3 is asked
anything, so the answer is the same whether the bucket exists or not. moto's S3 server stands
in for S3 (tests/agents/convert/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.agents.convert.conftest import (  # noqa: F401 (fixtures)
    FaultProxy,
    _s3_proxy_session,
    s3_admin,
    s3_bucket,
    s3_env,
    s3_proxy,
    s3_server,
)
from tests.server.conftest import LiveServer, make_settings


def _refused(response: httpx.Response, field: str, url: str) -> dict[str, Any]:
    assert response.status_code == 403, response.text
    error: dict[str, Any] = response.json()
    assert error["code"] == "PERMISSION_DENIED"
    assert error["message"].startswith(f"{field} のパス「{url}」")  # names the input
    assert "KEIRI_S3_ALLOWED_BUCKETS" in error["hint"]
    return error


def _without_url(error: dict[str, Any], url: str) -> str:
    return str(error).replace(url, "<url>")


@pytest.mark.usefixtures("s3_env")
def test_s3_source_only_in_allowed_places(
    serve: Callable[..., LiveServer],
    tmp_path: Path,
    s3_admin: Any,  # noqa: F811
    s3_bucket: str,  # noqa: F811
    s3_proxy: FaultProxy,  # noqa: F811
) -> None:
    s3_admin.put_object(Bucket=s3_bucket, Key="経理/売上.csv", Body="月,売上\n4月,100\n".encode())
    s3_admin.put_object(Bucket=s3_bucket, Key="人事/給与.csv", Body=b"secret")
    # By default a server task reads no bucket, not even one the credentials can read.
    default = serve(make_settings(tmp_path / "a"))
    with default.client() as client:
        existing = f"s3://{s3_bucket}/人事/給与.csv"
        missing = "s3://no-such-bucket-keiri/給与.csv"
        first = _refused(
            client.post("/agent/run", json={"request": "集計", "source": existing}),
            "source",
            existing,
        )
        second = _refused(
            client.post("/agent/run", json={"request": "集計", "source": missing}),
            "source",
            missing,
        )
        assert _without_url(first, existing) == _without_url(second, missing)  # no existence
    assert s3_proxy.requests == []  # S3 was never asked
    # The operator names a prefix: inside it the task goes ahead, beside it is refused.
    allowed = serve(
        make_settings(tmp_path / "b", keiri_s3_allowed_buckets=f"s3://{s3_bucket}/経理")
    )
    with allowed.client() as client:
        for url in (existing, f"s3://{s3_bucket}/", f"s3://{s3_bucket}/経理/../人事/給与.csv"):
            _refused(
                client.post("/agent/run", json={"request": "集計", "source": url}), "source", url
            )
        assert s3_proxy.requests == []
        ok = client.post(
            "/agent/run", json={"request": "集計", "source": f"s3://{s3_bucket}/経理/売上.csv"}
        )
        assert ok.status_code == 202, ok.text
