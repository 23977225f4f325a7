"""Settings: the only place in keiri-agent that reads the environment.

Values come from the process environment and from a ``.env`` file in the working directory
(environment wins). Nothing here needs an API key: credentials are checked when a model is
first needed (``Settings.require_credentials``: by the LLM layer as it builds the model, and by a
command that will call one before it loads anything heavy), so importing, validating and running
plans without ``ai.*`` blocks work with no key at all.

Models are named ``provider:model`` (``openai:gpt-4.1-mini``, ``azure:my-deployment``,
``anthropic:claude-sonnet-4-6``). ``KEIRI_LLM_MODEL`` is the default for every role;
``KEIRI_LLM_MODEL_<ROLE>`` overrides one role. Any OpenAI-compatible server (vLLM, Ollama,
llama.cpp server, LiteLLM) is reached with the ``openai`` provider and ``OPENAI_BASE_URL``.
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Final, Literal, NamedTuple
from urllib.parse import urlparse
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from keiri_agent.errors import ConfigurationError, CredentialsMissingError

__all__ = [
    "DEFAULT_CHAT_MODEL",
    "DEFAULT_TIMEZONE",
    "PROVIDERS",
    "ROLE_LABELS",
    "LLMRole",
    "ModelRef",
    "Settings",
    "load_settings",
    "mask_secret",
]

DEFAULT_CHAT_MODEL = "openai:gpt-4.1-mini"
DEFAULT_LLM_TIMEOUT_S = 60.0
DEFAULT_LLM_MAX_RETRIES = 3
DEFAULT_LLM_RETRY_BACKOFF_S = 1.0
DEFAULT_LLM_REPAIR_ROUNDS = 2
DEFAULT_ANALYSIS_TURN_TIMEOUT_S = 900.0
DEFAULT_CONVERT_TIMEOUT_S = 600.0
DEFAULT_CONVERT_MAX_BYTES = 100 * 1024 * 1024
DEFAULT_MAX_UPLOAD_BYTES = 100 * 1024 * 1024
DEFAULT_MAX_RUNNING_TASKS = 4
DEFAULT_MAX_QUEUED_TASKS = 32
# One user's running and queued tasks together: below the 36 places above, so that one user
# cannot take them all; still more than the running slots, so one user alone can use them all.
DEFAULT_MAX_TASKS_PER_USER = 8
# Help desk: the most subtasks one question is split into (the planner is asked for 1–5).
DEFAULT_HELPDESK_MAX_SUBTASKS = 5
# Help desk: a hit whose relevance (0..1, retrieval.lexical) is below this is not relevant:
# measured by benchmarks/helpdesk_floor.py on the sample knowledge base and the large eval set
# (see benchmarks/README.md).
DEFAULT_HELPDESK_MIN_RELEVANCE = 0.35
# The help desk's semantic floor (issue 38): how much closer a question must be to the knowledge
# base than to unrelated text (cosine, the local model's scale), measured in benchmarks/README.md.
DEFAULT_HELPDESK_MIN_MARGIN = 0.009
DEFAULT_SHUTDOWN_TIMEOUT_S = 30.0
DEFAULT_RETENTION_DAYS = 30.0
DEFAULT_PLAN_MAX_FOREACH_ITEMS = 100_000  # KEIRI_PLAN_MAX_FOREACH_ITEMS
DEFAULT_TIMEZONE = "Asia/Tokyo"  # KEIRI_TIMEZONE: where the people reading the times live
PROVIDERS: tuple[str, ...] = ("openai", "azure", "anthropic")
OPENAI_PUBLIC_HOST = "api.openai.com"


class LLMRole(StrEnum):
    """Who is asking for a model. Each role can be pointed at its own model."""

    DEFAULT = "default"
    REASON = "reason"  # seed 000: the ReAct reason node
    CODEGEN = "codegen"  # seed 000: code generation for the sandbox
    REPORT = "report"  # seed 000: the Japanese report
    PLAN = "plan"  # seed 004: plan generation and the design chat
    HELPDESK = "helpdesk"  # seed 001: the help-desk agent
    CODEACT = "codeact"  # seed 003: the CodeAct fallback
    INTERPRET = "interpret"  # seed 003: request interpretation
    PROCESS = "process"  # ai.process_llm and other ai.* blocks
    EMBEDDING = "embedding"  # retrieval; unset means "no embedding model"


# What each role is for, as a person reads it (the app's sidebar, a missing-key error).
ROLE_LABELS: Final[dict[str, str]] = {
    "default": "既定",
    "reason": "データ分析: 判断",
    "codegen": "データ分析: コード生成",
    "report": "データ分析: レポート",
    "plan": "設計",
    "helpdesk": "ヘルプデスク",
    "codeact": "変換: CodeAct",
    "interpret": "変換: 要求の解釈",
    "process": "AI ブロック",
    "embedding": "埋め込み（検索）",
}


class ModelRef(NamedTuple):
    """A parsed ``provider:model`` pair."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}:{self.model}"

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        """Parse ``provider:model``; a bare model name is rejected rather than guessed at."""
        provider, sep, model = text.strip().partition(":")
        provider = provider.strip().lower()
        model = model.strip()
        if not sep or not provider or not model:
            raise ValueError(
                f"モデル指定 '{text}' は 'provider:model' の形式ではありません"
                f"（例: openai:gpt-4.1-mini, anthropic:claude-sonnet-4-6）。"
            )
        if provider not in PROVIDERS:
            raise ValueError(
                f"モデル指定 '{text}' のプロバイダー '{provider}' は未対応です。"
                f" 使えるのは {', '.join(PROVIDERS)} です"
                "（OpenAI 互換サーバーは openai と OPENAI_BASE_URL で指定します）。"
            )
        return cls(provider, model)


def _parse_model(value: object) -> ModelRef | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, ModelRef):
        return value
    return ModelRef.parse(str(value))


_S3_BUCKET = re.compile(r"[a-z0-9][a-z0-9.\-_]{1,254}")  # S3's own naming rule, loosely


def _s3_place(text: str) -> str:
    """One entry of KEIRI_S3_ALLOWED_BUCKETS as ``bucket`` or ``bucket/prefix`` (no ``s3://``,
    no trailing "/"); ValueError for a bucket name S3 would not take or a ``.``/``..`` part."""
    place = text.strip()
    if place.lower().startswith("s3://"):
        place = place[len("s3://") :]
    place = place.strip("/")
    bucket, _sep, prefix = place.partition("/")
    if not _S3_BUCKET.fullmatch(bucket) or {".", ".."} & set(prefix.split("/")):
        raise ValueError(f"'{text}' はバケット名か s3://バケット名/フォルダー の形ではありません")
    return place


# Model names are plain strings in the environment, never JSON: parse them ourselves.
ModelSetting = Annotated[ModelRef, NoDecode]


class Settings(BaseSettings):
    """Effective configuration. Field names are the environment variable names, lower-cased."""

    model_config = SettingsConfigDict(
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=False,
        frozen=True,
    )

    # Providers
    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    azure_openai_api_key: SecretStr | None = None
    azure_openai_endpoint: str | None = None
    openai_api_version: str | None = None
    anthropic_api_key: SecretStr | None = None
    anthropic_base_url: str | None = None

    # Models: default and per-role overrides
    keiri_llm_model: ModelSetting = Field(default=ModelRef.parse(DEFAULT_CHAT_MODEL))
    keiri_llm_model_reason: ModelSetting | None = None
    keiri_llm_model_codegen: ModelSetting | None = None
    keiri_llm_model_report: ModelSetting | None = None
    keiri_llm_model_plan: ModelSetting | None = None
    keiri_llm_model_helpdesk: ModelSetting | None = None
    keiri_llm_model_codeact: ModelSetting | None = None
    keiri_llm_model_interpret: ModelSetting | None = None
    keiri_llm_model_process: ModelSetting | None = None
    keiri_llm_model_embedding: ModelSetting | None = None

    # LLM call behaviour
    keiri_llm_timeout_s: float = Field(default=DEFAULT_LLM_TIMEOUT_S, gt=0)
    keiri_llm_max_retries: int = Field(default=DEFAULT_LLM_MAX_RETRIES, ge=0, le=10)
    keiri_llm_retry_backoff_s: float = Field(default=DEFAULT_LLM_RETRY_BACKOFF_S, ge=0)
    keiri_llm_structured_method: Literal["json_schema", "function_calling"] = "json_schema"
    # Structured replies that do not fit the schema are sent back with what was wrong this many
    # times (separate from keiri_llm_max_retries, which covers transport failures).
    keiri_llm_repair_rounds: int = Field(default=DEFAULT_LLM_REPAIR_ROUNDS, ge=0, le=5)
    keiri_llm_temperature: float | None = Field(default=None, ge=0, le=2)
    # Strict structured output (OpenAI's strict JSON Schema subset) for calls whose schema is
    # built for it (plan generation): auto = on for Azure and for OpenAI's own API (no
    # OPENAI_BASE_URL, or one on api.openai.com), off for any other OPENAI_BASE_URL (vLLM,
    # Ollama... get the tool-use schema) and for Anthropic; on / off force it.
    keiri_llm_strict_schema: Literal["auto", "on", "off"] = "auto"
    # Personal data (names, phone numbers, マイナンバー...) is replaced by placeholders before
    # every chat and embedding call and restored in the replies (keiri_agent.llm.masking); off
    # only for a model on the company's own machines.
    keiri_llm_mask_pii: bool = True

    # Behaviour switches
    keiri_agent_llm_fallback: bool = False

    # The zone people read times in (IANA name; keiri_agent.localtime); stored times stay UTC.
    # The default is validated too: a machine without the tz database is told, not failing import.
    keiri_timezone: ZoneInfo = Field(default=DEFAULT_TIMEZONE, validate_default=True)

    # How a negative amount is shown everywhere (documents.amount_format): △660, -660, (660),
    # or -660 in red.
    keiri_negative_amounts: Literal["triangle", "minus", "parens", "red"] = "triangle"

    # Where things live
    keiri_workspace_root: Path = Path("workspace")
    keiri_runs_dir: Path = Path("runs")
    keiri_designs_dir: Path = Path("designs")  # plans; subflow plan_ids resolve under it
    # Plan versions and their reviews (keiri_agent.versions); unset: <designs>/.versions.
    keiri_versions_dir: Path | None = None
    # Extra block spec directories (os.pathsep-separated), searched after the built-in ones.
    keiri_block_spec_dirs: str = ""
    # YAML file behind ${config.*} references in plans (none: such references are errors).
    keiri_plan_config: Path | None = None
    # Caches that can be deleted at any time (embeddings of block specs and documents).
    keiri_cache_dir: Path = Path(".keiri-cache")
    # Payer names a person confirmed in 入金消込 (振込依頼人名 → 取引先コード), read by every run
    # of table.match_payments and added to by table.learn_payer_names (unset:
    # <KEIRI_WORKSPACE_ROOT>/learned_payer_names.csv).
    keiri_learned_payer_names: Path | None = None

    # Help desk (seed 001): the knowledge base `keiri-agent helpdesk ingest` writes and the
    # agent searches; a Qdrant server for the Q/A vectors (unset: embedded local mode inside
    # the index directory).
    keiri_helpdesk_index: Path = Path("helpdesk_index")
    # The plan's subtask count is capped here whatever the model proposes (the rest is reported).
    keiri_helpdesk_max_subtasks: int = Field(default=DEFAULT_HELPDESK_MAX_SUBTASKS, ge=1, le=20)
    # Removed (it was a floor on raw BM25 scores): set, it is a configuration error naming
    # KEIRI_HELPDESK_MIN_RELEVANCE, so a value tuned for the old scale is never silently ignored.
    # Excluded: not a setting any more, so `doctor` does not list it.
    keiri_helpdesk_min_score: str | None = Field(default=None, exclude=True)
    keiri_qdrant_url: str | None = None
    # The help desk's one relevance floor (0..1, retrieval.lexical's relevance): hits below it
    # are left out of search and never shown to the agent's model; no hit left is "該当なし".
    keiri_helpdesk_min_relevance: float = Field(
        default=DEFAULT_HELPDESK_MIN_RELEVANCE, ge=0.0, le=1.0
    )
    # Cosine similarity at which a dense Q/A hit of a provider embedding model
    # (KEIRI_LLM_MODEL_EMBEDDING) counts as relevant whatever its words.
    keiri_helpdesk_min_similarity: float = Field(default=0.6, ge=-1.0, le=1.0)
    # Semantic search with the model that ships with the install (no provider embedding model
    # set): false = lexical search only. The floor: a question is covered when how much nearer it
    # is to the knowledge base than to unrelated text (averaged over the texts as passages and in
    # the form of a question, plus a twentieth of its lexical relevance) reaches
    # KEIRI_HELPDESK_MIN_MARGIN, or comes within
    # SHARED_WORDS_ALLOWANCE of it and a text nearest in meaning shares its words
    # (agents.helpdesk.knowledge.ranking).
    keiri_helpdesk_semantic: bool = True
    keiri_helpdesk_min_margin: float = Field(default=DEFAULT_HELPDESK_MIN_MARGIN, ge=-1.0, le=1.0)
    # Manual chunks: the most characters per chunk, and how much of a chunk's end the next repeats.
    keiri_helpdesk_chunk_chars: int = Field(default=600, ge=50, le=12_000)
    keiri_helpdesk_chunk_overlap: int = Field(default=120, ge=0)

    # Conversion (seed 003): the CodeAct fallback writes only under <root>/<uuid>/.
    keiri_codeact_root: Path = Path("/tmp/codeact")
    # Conversion sources on S3 or an S3-compatible store (MinIO...): endpoint URL and region
    # (unset: AWS's own); credentials come from boto3's chain (AWS_ACCESS_KEY_ID, AWS_PROFILE...).
    keiri_s3_endpoint_url: str | None = None
    keiri_s3_region: str | None = None
    # The S3 places an API server task may read with the server's credentials: buckets or
    # bucket prefixes (``keiri-data`` or ``s3://keiri-data/2024``), comma- or space-separated.
    # Unset or empty: none. The CLI and the app's local runs (the operator's own) read any.
    keiri_s3_allowed_buckets: Annotated[tuple[str, ...], NoDecode] = ()
    # The most bytes one conversion request may fetch (all its files together).
    keiri_convert_max_bytes: int = Field(default=DEFAULT_CONVERT_MAX_BYTES, gt=0)
    # Deadline for a whole analysis turn (seconds).
    keiri_analysis_turn_timeout_s: float = Field(default=DEFAULT_ANALYSIS_TURN_TIMEOUT_S, gt=0)
    # Deadline for a whole conversion task, CodeAct included (seconds).
    keiri_convert_timeout_s: float = Field(default=DEFAULT_CONVERT_TIMEOUT_S, gt=0)

    # API server (`keiri-agent serve`): Bearer key for every /agent route (unset: no auth),
    # and the largest request body accepted.
    keiri_api_key: SecretStr | None = None
    keiri_max_request_bytes: int = Field(default=1_000_000, ge=1)
    # Files uploaded with one request (multipart): all parts together.
    keiri_max_upload_bytes: int = Field(default=DEFAULT_MAX_UPLOAD_BYTES, ge=1)
    # Host names the server answers besides localhost and its bind address (comma-separated;
    # "*" accepts any Host header, which opens the server to DNS rebinding).
    keiri_allowed_hosts: str = ""
    # Tasks running at once; more wait in a queue of at most keiri_max_queued_tasks (then 429).
    keiri_max_running_tasks: int = Field(default=DEFAULT_MAX_RUNNING_TASKS, ge=1, le=256)
    keiri_max_queued_tasks: int = Field(default=DEFAULT_MAX_QUEUED_TASKS, ge=0, le=10_000)
    # One user's running and queued tasks together (a server without keys: all its callers as
    # one anonymous user); over it only that user gets 429.
    keiri_max_tasks_per_user: int = Field(default=DEFAULT_MAX_TASKS_PER_USER, ge=1, le=10_000)
    # Users of the server: a YAML file {users: [{name, key_sha256, role: user|approver|admin}]} (unset:
    # KEIRI_API_KEY alone, or no authentication).
    keiri_api_keys_file: Path | None = None
    # Folders every task of the server may read besides its own uploads and outputs
    # (os.pathsep-separated). Unset: the bundled example data; empty: none.
    keiri_shared_data_dirs: str | None = None
    # On SIGTERM, running tasks get this long to finish before they stop at a checkpoint and
    # are marked interrupted (plan tasks then continue after the restart).
    keiri_shutdown_timeout_s: float = Field(default=DEFAULT_SHUTDOWN_TIMEOUT_S, ge=0, le=3600)
    # Server logs: plain lines (text) or one JSON object per line (json), and their level.
    keiri_log_format: Literal["text", "json"] = "text"
    keiri_log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Finished tasks, plan run logs and analysis workspaces older than this many days are
    # removed by the server and by `keiri-agent gc` (0: keep everything).
    keiri_retention_days: float = Field(default=DEFAULT_RETENTION_DAYS, ge=0, le=36_500)

    # Plan runner
    keiri_plan_max_threads: int = Field(default=64, ge=1, le=1024)
    # Items one foreach accepts: bounds a run's memory, log and time (docs/limits.md has the
    # measured cost per item). A longer list fails before its first item.
    keiri_plan_max_foreach_items: int = Field(
        default=DEFAULT_PLAN_MAX_FOREACH_ITEMS, ge=1, le=10_000_000
    )
    # fsync run logs and server task logs (group commit) so a finished node or a task's status
    # survives a power cut or kernel crash; false for throwaway runs (tests, benchmarks), where
    # the page cache is enough.
    keiri_run_log_fsync: bool = True
    # Dask scheduler for ``policy.executor: dask`` (tcp://host:8786); unset: a local cluster.
    keiri_dask_scheduler: str | None = None

    # Change control (keiri_agent.versions): only approved plan versions run (on), or any
    # (off); auto = on once the users file names an approver (a team), off otherwise (one
    # person, no users file). Self-approval lets a team of one approve its own versions (each
    # such approval is recorded as one). The CLI acts as the user of KEIRI_USER_KEY when the
    # users file is set (approvals need it; saves and runs name that user, else the OS user).
    keiri_require_approval: Literal["auto", "on", "off"] = "auto"
    keiri_allow_self_approval: bool = False
    keiri_user_key: SecretStr | None = None

    # Schedules and triggers (keiri_agent.schedule, run by `keiri-agent serve`). Company holidays
    # on top of Japan's public holidays and weekends: comma-separated MM-DD, MM-DD..MM-DD
    # (a range, may cross the new year) or YYYY-MM-DD. The scheduler and the folder triggers
    # look every tick; a fire time found later than the grace is a missed one (its schedule's
    # misfire policy applies); a new file in a watched folder must keep its size this long
    # before it runs. A notify URL is told (JSON POST) when a scheduled or triggered run waits
    # for a person or fails.
    keiri_company_holidays: str = "12-29..01-03"
    keiri_scheduler: bool = True
    keiri_schedule_tick_s: float = Field(default=5.0, gt=0, le=60)
    keiri_schedule_grace_s: float = Field(default=300.0, ge=0)
    keiri_trigger_settle_s: float = Field(default=3.0, ge=0)
    keiri_notify_webhook_url: str | None = None

    def block_spec_dirs(self) -> list[Path]:
        return [Path(p) for p in self.keiri_block_spec_dirs.split(os.pathsep) if p.strip()]

    def learned_payer_names_path(self) -> Path:
        """Where the learned payer names are kept (``KEIRI_LEARNED_PAYER_NAMES``)."""
        if self.keiri_learned_payer_names is not None:
            return self.keiri_learned_payer_names
        return self.keiri_workspace_root / "learned_payer_names.csv"

    def shared_data_dirs(self) -> list[Path] | None:
        """The folders of ``KEIRI_SHARED_DATA_DIRS``; None when it is unset (the server then
        shares the bundled example data)."""
        if self.keiri_shared_data_dirs is None:
            return None
        return [Path(p) for p in self.keiri_shared_data_dirs.split(os.pathsep) if p.strip()]

    @field_validator("keiri_s3_allowed_buckets", mode="before")
    @classmethod
    def _s3_places(cls, value: object) -> tuple[str, ...]:
        if value is None:
            return ()
        items = value.replace(",", " ").split() if isinstance(value, str) else value
        if not isinstance(items, list | tuple):
            raise ValueError("バケット名の並び（カンマ区切り）を指定してください")
        return tuple(_s3_place(str(item)) for item in items)

    @field_validator(
        "keiri_llm_model",
        *(f"keiri_llm_model_{role.value}" for role in LLMRole if role is not LLMRole.DEFAULT),
        mode="before",
    )
    @classmethod
    def _model_ref(cls, value: object) -> ModelRef | None:
        return _parse_model(value)

    @field_validator(
        "openai_base_url",
        "azure_openai_endpoint",
        "anthropic_base_url",
        "openai_api_version",
        "keiri_qdrant_url",
        "keiri_s3_endpoint_url",
        "keiri_s3_region",
    )
    @classmethod
    def _blank_is_unset(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        return value.strip()

    @field_validator("keiri_helpdesk_min_score")
    @classmethod
    def _removed_min_score(cls, value: str | None) -> None:
        if value is not None and value.strip():
            raise ValueError(
                "KEIRI_HELPDESK_MIN_SCORE は廃止されました（BM25 の生スコアの下限でした）。"
                "関連度の下限は KEIRI_HELPDESK_MIN_RELEVANCE（0〜1、既定 "
                f"{DEFAULT_HELPDESK_MIN_RELEVANCE:g}）で指定し、KEIRI_HELPDESK_MIN_SCORE は"
                "削除してください"
            )
        return None

    @field_validator("keiri_timezone", mode="before")
    @classmethod
    def _zone(cls, value: object) -> ZoneInfo:
        if isinstance(value, ZoneInfo):
            return value
        name = str(value).strip() or DEFAULT_TIMEZONE  # blank is unset, as for the URLs
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            raise ValueError(
                f"'{name}' は IANA のタイムゾーン名として見つかりません。"
                "Asia/Tokyo、America/New_York、UTC のように「地域/都市」の名前で指定してください"
                "（大文字・小文字も区別します）"
            ) from None

    @field_validator(
        "keiri_api_keys_file", "keiri_learned_payer_names", "keiri_versions_dir", mode="before"
    )
    @classmethod
    def _blank_path_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("keiri_require_approval", mode="before")
    @classmethod
    def _on_off(cls, value: object) -> object:
        """true/false (and yes/no, 1/0) mean on/off, as for the boolean settings."""
        if isinstance(value, bool):
            return "on" if value else "off"
        text = str(value).strip().lower()
        return {"true": "on", "1": "on", "yes": "on", "false": "off", "0": "off", "no": "off"}.get(
            text, text or "auto"
        )

    def versions_dir(self) -> Path:
        """Where plan versions are kept: ``KEIRI_VERSIONS_DIR``, else ``<designs>/.versions``."""
        if self.keiri_versions_dir is not None:
            return self.keiri_versions_dir
        return self.keiri_designs_dir / ".versions"

    def model_for(self, role: LLMRole | str) -> ModelRef | None:
        """The model a role uses: its override, else ``KEIRI_LLM_MODEL``.

        The embedding role has no default: ``None`` means "no embedding model configured",
        which retrieval reports explicitly instead of silently using a chat model.
        """
        role = LLMRole(role)
        if role is LLMRole.DEFAULT:
            return self.keiri_llm_model
        override: ModelRef | None = getattr(self, f"keiri_llm_model_{role.value}")
        if override is not None or role is LLMRole.EMBEDDING:
            return override
        return self.keiri_llm_model

    def openai_base_url_is_custom(self) -> bool:
        """True when OPENAI_BASE_URL points at a server other than OpenAI's own."""
        if not self.openai_base_url:
            return False
        host = urlparse(self.openai_base_url).hostname or ""
        return host != OPENAI_PUBLIC_HOST

    def missing_credentials(self, provider: str) -> list[str]:
        """Variables that must be set before ``provider`` can be used (empty when usable)."""
        if provider == "openai":
            # Self-hosted OpenAI-compatible servers (vLLM, Ollama, llama.cpp) take any key.
            if self.openai_api_key is None and not self.openai_base_url_is_custom():
                return ["OPENAI_API_KEY"]
            return []
        if provider == "azure":
            missing = []
            if self.azure_openai_api_key is None:
                missing.append("AZURE_OPENAI_API_KEY")
            if not self.azure_openai_endpoint:
                missing.append("AZURE_OPENAI_ENDPOINT")
            if not self.openai_api_version:
                missing.append("OPENAI_API_VERSION")
            return missing
        if provider == "anthropic":
            return [] if self.anthropic_api_key is not None else ["ANTHROPIC_API_KEY"]
        raise ValueError(f"unknown provider: {provider}")

    def require_credentials(self, provider: str, *, purpose: str = "") -> None:
        """Raise ``CredentialsMissingError`` naming what to set unless ``provider`` is usable.

        The LLM layer calls this when it builds a model; a command calls it (through
        ``keiri_agent.cli.common.require_llm``) before it loads anything heavy.
        """
        missing = self.missing_credentials(provider)
        if missing:
            label = ROLE_LABELS.get(purpose, purpose)
            raise CredentialsMissingError(provider, missing, purpose=label)


def load_settings() -> Settings:
    """Read the settings afresh from the environment and ``.env``.

    A malformed value raises ``ConfigurationError`` naming each offending variable.
    """
    try:
        return Settings()
    except ValidationError as exc:
        problems = {
            str(err["loc"][0]).upper() if err["loc"] else "?": _error_text(err)
            for err in exc.errors()
        }
        listing = "; ".join(f"{name}: {text}" for name, text in problems.items())
        raise ConfigurationError(
            f"設定値が不正です: {listing}",
            hint="環境変数または .env の該当する値を直してください"
            "（一覧と既定値は README の設定表にあります）。",
            details={"invalid": problems},
        ) from None


def _error_text(err: Any) -> str:
    ctx = err.get("ctx") or {}
    cause = ctx.get("error")
    return str(cause) if cause is not None else str(err.get("msg", ""))


def mask_secret(value: SecretStr | str | None) -> str:
    """Show that a secret is set without showing it: the last four characters at most."""
    if value is None:
        return "(未設定)"
    raw = value.get_secret_value() if isinstance(value, SecretStr) else value
    if len(raw) <= 8:
        return "****"
    return f"****{raw[-4:]}"
