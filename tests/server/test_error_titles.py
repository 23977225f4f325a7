"""Every error body of the API carries its code in words (``title``) beside the code, from the
one table the app and the CLI say codes in (``errors.CODE_WORDS``); the API's own codes (an
unknown task, a missing key, ...) are ``ErrorCode`` members, so each has its words too."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI
from fastapi.testclient import TestClient

from keiri_agent.errors import BlockError, ErrorCode, code_word
from keiri_agent.server.errors import ApiError, install_error_handlers
from tests.server.conftest import LiveServer, make_settings

KEY = "k3iri-test-key-0123456789"


def _app() -> FastAPI:
    """Routes that fail as the server's do: a BlockError of a block, an ApiError, a model."""
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/block/{code}")
    def block(code: str) -> None:
        raise BlockError(
            "売上明細.xlsx を読めません。", code=code, hint="ファイルを確認してください。"
        )

    @app.get("/api/{code}")
    def api(code: str) -> None:
        raise ApiError(
            409, ErrorCode(code), "このタスクは終了しています。", hint="新しく依頼してください。"
        )

    @app.post("/model")
    def model(limit: int) -> None:
        del limit

    return app


def test_every_code_comes_with_its_words() -> None:
    """Every code, as a block's failure or as the API's own, in a seeded order with the
    requests FastAPI refuses (422, 404, 405): ``title`` is its words, never その他."""
    codes = [*ErrorCode, *random.Random(2020).choices(list(ErrorCode), k=100)]
    wrong = {}
    with TestClient(_app()) as client:
        for n, code in enumerate(codes):
            body = client.get(f"/{('block', 'api')[n % 2]}/{code}").json()
            said = body.get("title")
            if body["code"] != code or said != code_word(code) or said == "その他":
                wrong[code] = body
        for response in (client.post("/model?limit=many"), client.get("/nowhere"),
                         client.put("/model")):  # fmt: skip
            body = response.json()
            if body["code"] not in set(ErrorCode) or body.get("title") != code_word(body["code"]):
                wrong[response.status_code] = body
    assert wrong == {}, f"{len(wrong)} codes without their words: {wrong}"


def test_a_live_server_words_its_own_codes(
    serve: Callable[..., LiveServer], tmp_path: Path
) -> None:
    """The server's own refusals, as a client meets them: the words of each code."""
    live = serve(make_settings(tmp_path, keiri_api_key=KEY))
    with live.client() as client:
        missing_key = client.get("/agent/tasks").json()
        unknown = client.get(
            f"/agent/tasks/{'x' * 22}", headers={"Authorization": f"Bearer {KEY}"}
        ).json()
    assert missing_key["code"] == ErrorCode.API_KEY_REQUIRED
    assert missing_key["title"] == "API キーがない"
    assert unknown["code"] == ErrorCode.TASK_NOT_FOUND
    assert unknown["title"] == "ないタスク"
