"""変換 page (seed 003): convert files among table formats or plot them, following the five steps
on a progress bar driven by the pipeline's ``stage`` events (the same events the SSE page reads).

The input is uploaded (saved into a new session folder) or named by a local path or an
``s3://`` URL. While the pipeline runs, its log lines show inside ``st.status`` and the bar
moves with each step; afterwards only the answer stays (seed 003 §3: logs are shown while
waiting, never in the final answer), with download buttons for the files, the code CodeAct wrote
when the fallback was used, and errors as the red error display. When CodeAct asks a question,
the page shows it with an answer field; answering continues the same task. Session State (prefix
``convert_``) keeps the last outcome across reruns until the next request, and the inputs (the
request, the source and the uploaded files) across page switches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from keiri_agent.config import LLMRole, Settings
from keiri_agent.errors import BlockError
from keiri_agent.ui import session_state
from keiri_agent.ui.chrome import file_uploader
from keiri_agent.ui.llm_notice import llm_problem, warn_llm_problem
from keiri_agent.ui.page import action_requested, open_page, render_retryable_error
from keiri_agent.ui.report_view import render_downloads

if TYPE_CHECKING:
    from keiri_agent.agents.convert.models import Continuation
    from keiri_agent.agents.convert.pipeline import ConvertResult
    from keiri_agent.events import RunEvent

__all__ = ["ANSWER_KEY", "OUTCOME_KEY", "PAGE", "REQUEST_KEY", "SOURCE_KEY", "Conversion", "render"]

PAGE = "convert"
(
    REQUEST_KEY,
    SOURCE_KEY,
    MODE_KEY,
    UPLOAD_KEY,
    UPLOADED_KEY,
    UPLOADS_CHANGED_KEY,
    RUN_KEY,
    RETRY_KEY,
    PENDING_KEY,
    OUTCOME_KEY,
    ANSWER_KEY,
    ANSWER_RUN_KEY,
    CONTINUE_KEY,
) = session_state.page_keys(
    PAGE,
    "request",
    "source",
    "source_mode",
    "uploads",
    "uploaded",  # the files of the last upload
    "uploads_changed",
    "run",
    "retry",
    "pending",
    "outcome",
    "answer",
    "answer_run",
    "continue",
)
MODE_UPLOAD = "ファイルをアップロード"
MODE_PATH = "パスまたは S3 URL を指定"
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".svg"})
UPLOAD_TYPES = ["csv", "tsv", "txt", "xlsx", "xlsm", "json", "jsonl", "parquet"]


@dataclass(frozen=True)
class Upload:
    """An uploaded file, kept after the uploader is emptied by a page switch."""

    name: str
    data: bytes


@dataclass
class Conversion:
    """One conversion: the request, its progress and code, and its result or LLM error."""

    request: str
    result: ConvertResult | None = None
    error: BlockError | None = None
    progress: float = 0.0
    progress_label: str = ""
    code: list[str] = field(default_factory=list)  # what CodeAct wrote, in order


def _source(settings: Settings) -> tuple[str | None, Path | None]:
    """The source the user chose (saving uploads into a new session folder) and that folder."""
    from keiri_agent.workspace import confine, new_session_dir

    if st.session_state.get(MODE_KEY, MODE_UPLOAD) == MODE_PATH:
        text = str(st.session_state.get(SOURCE_KEY) or "").strip()
        return (text or None), None
    uploads: list[Upload] = st.session_state.get(UPLOADED_KEY) or []
    if not uploads:
        return None, None
    session = new_session_dir(settings.keiri_workspace_root)
    inputs = session / "inputs"
    inputs.mkdir()
    for upload in uploads:
        confine(inputs, Path(upload.name).name).write_bytes(upload.data)
    return str(inputs), session


def _mark_uploads_changed() -> None:
    st.session_state[UPLOADS_CHANGED_KEY] = True


def _uploads() -> None:
    """The uploader; its files are kept (``convert_uploaded``) until the person changes them,
    since Streamlit empties an uploader that a run did not draw (a page switch)."""
    files = file_uploader(
        "入力ファイル（複数可）",
        UPLOAD_TYPES,
        multiple=True,
        key=UPLOAD_KEY,
        on_change=_mark_uploads_changed,
    )
    changed = bool(st.session_state.pop(UPLOADS_CHANGED_KEY, False))
    if files:
        st.session_state[UPLOADED_KEY] = [Upload(f.name, f.getvalue()) for f in files]
    elif changed:
        st.session_state.pop(UPLOADED_KEY, None)
    kept: list[Upload] = st.session_state.get(UPLOADED_KEY) or []
    if kept and not files:
        st.caption("アップロード済みのファイル: " + "、".join(u.name for u in kept))


def _run(request: str, settings: Settings, continuation: Continuation | None = None) -> Conversion:
    from keiri_agent.agents.convert.pipeline import AGENT_ID, run_convert
    from keiri_agent.agents.convert.progress import Progress, describe_event
    from keiri_agent.events import CodeGen, open_run
    from keiri_agent.events.follow import run_following

    outcome = Conversion(request=request)
    source, session = (None, None) if continuation is not None else _source(settings)
    out_dir = session / "outputs" if session is not None else None
    progress = Progress()
    live = st.empty()  # the bar and the log lines, shown only while the run lasts
    with live.container():
        bar = st.progress(0.0, text=progress.label)
        with st.status("変換しています…", expanded=True) as status:

            def show(event: RunEvent) -> None:
                line = describe_event(event)
                if line is not None:
                    st.text(line.strip())
                if isinstance(event, CodeGen):
                    outcome.code.append(event.code)
                if progress.add(event):
                    bar.progress(progress.fraction, text=progress.label)

            try:
                stream = open_run(AGENT_ID, runs_dir=settings.keiri_runs_dir)
                outcome.result = run_following(
                    stream,
                    lambda: run_convert(
                        request,
                        source=source,
                        out_dir=out_dir,
                        settings=settings,
                        events=stream,
                        continuation=continuation,
                    ),
                    show,
                    name="keiri-convert-page",
                )
            except BlockError as exc:  # LLM API errors are raised by the pipeline
                outcome.error = exc
            failed = outcome.error is not None or (
                outcome.result is not None
                and outcome.result.status not in ("success", "waiting_input")
            )
            label = "エラーが発生しました" if failed else "完了しました"
            status.update(label=label, state="error" if failed else "complete", expanded=False)
    live.empty()
    outcome.progress, outcome.progress_label = progress.fraction, progress.label
    return outcome


def _render_files(result: ConvertResult) -> None:
    files = [path for path in result.files if path.is_file()]
    missing = [path.name for path in result.files if not path.is_file()]
    for path in files:
        if path.suffix.lower() in IMAGE_SUFFIXES:
            st.image(str(path), caption=path.name)
    render_downloads(None, files, key=session_state.page_key(PAGE, "download"))
    if missing:
        st.warning("次のファイルが出力先にありません: " + "、".join(missing))


def _render_outcome(outcome: Conversion) -> None:
    st.progress(outcome.progress, text=outcome.progress_label or " ")
    error = outcome.error
    result = outcome.result
    if result is not None and result.status == "failed":
        error = BlockError.from_dict(result.error or {"message": result.answer})
    if error is not None:
        render_retryable_error(error, retry_key=RETRY_KEY, pending_key=PENDING_KEY)
        return
    if result is None:
        return
    if result.status == "cancelled":
        st.warning("変換は取り消されました。", icon="⚠️")
        return
    if result.status == "waiting_input":
        _render_question(result)
        return
    st.subheader("結果")
    st.markdown(result.answer)
    if result.used_fallback:
        st.info(
            "標準の処理で対応できなかったため、CodeAct が生成した Python コードを"
            f"サンドボックスで実行して作成しました（理由: {result.fallback_reason}）。",
            icon="🛠️",
        )
        for number, code in enumerate(outcome.code, start=1):
            with st.expander(f"CodeAct が生成したコード {number}"):
                st.code(code, language="python")
    _render_files(result)
    if result.run_log:
        st.caption(f"実行ログ: `{result.run_log}`")


def _render_question(result: ConvertResult) -> None:
    """CodeAct's question and the field that answers it (the answer continues the task)."""
    st.info(f"CodeAct からの質問: {result.question}", icon=":material/help:")
    text = st.text_input("回答", key=ANSWER_KEY, placeholder="質問への回答を入力してください")
    if st.button("回答して続ける", key=ANSWER_RUN_KEY, type="primary"):
        if not text.strip() or result.continuation is None:
            st.warning("回答を入力してください。")
            return
        st.session_state[CONTINUE_KEY] = result.continuation.answered(text)
        st.session_state.pop(ANSWER_KEY, None)
        st.rerun()


def render() -> None:
    """The 変換 page."""
    settings = open_page(
        "変換",
        "ファイルを別の形式（CSV / TSV / Excel / JSON / JSONL / Parquet）に変換したり、"
        "グラフ（折れ線・棒・散布図・ヒストグラム・箱ひげ図）にしたりします。"
        "標準の処理で対応できない依頼は、CodeAct が Python コードを書いてサンドボックスで実行します。",
    )
    if settings is None:
        return
    # CodeAct is only the fallback: without it the page still converts, so only the interpret
    # role blocks the button; one notice covers both roles.
    interpret_problem = llm_problem(settings, LLMRole.INTERPRET)
    warn_llm_problem(settings, LLMRole.INTERPRET, LLMRole.CODEACT)
    request = session_state.kept_widget(
        PAGE,
        REQUEST_KEY,
        st.text_area,
        "依頼",
        default="",
        placeholder="例: 売上.csv を Parquet に変換して／月別の売上を棒グラフにして",
    )
    mode = session_state.kept_widget(
        PAGE,
        MODE_KEY,
        st.radio,
        "入力",
        [MODE_UPLOAD, MODE_PATH],
        default=MODE_UPLOAD,
        horizontal=True,
    )
    if mode == MODE_UPLOAD:
        _uploads()
    else:
        session_state.kept_widget(
            PAGE,
            SOURCE_KEY,
            st.text_input,
            "パスまたは S3 URL",
            default="",
            placeholder="/data/売上.csv、/data/2024/、s3://keiri-data/2024/",
            help="フォルダーや S3 のプレフィックスを指定すると、その中のファイルを使います。"
            "空欄なら依頼文に書いた場所を使います。",
        )
    blocked = interpret_problem is not None
    icon = ":material/transform:"
    if action_requested(
        "変換する", key=RUN_KEY, pending_key=PENDING_KEY, blocked=blocked, icon=icon
    ):
        if not request.strip():
            st.warning("依頼を入力してください。")
        else:
            st.session_state[OUTCOME_KEY] = _run(request.strip(), settings)
    continuation: Continuation | None = st.session_state.pop(CONTINUE_KEY, None)
    previous: Conversion | None = st.session_state.get(OUTCOME_KEY)
    if continuation is not None and previous is not None and interpret_problem is None:
        st.session_state[OUTCOME_KEY] = _run(previous.request, settings, continuation)
    outcome: Conversion | None = st.session_state.get(OUTCOME_KEY)
    if outcome is not None:
        _render_outcome(outcome)
