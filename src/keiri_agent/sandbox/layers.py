"""The vocabulary of the isolation layers: their names, their status, their failures."""

from __future__ import annotations

from dataclasses import dataclass

from keiri_agent.errors import BlockError, ErrorCode, KeiriError

__all__ = [
    "ACTION_LAYER_NAMES",
    "DEFAULT_HINT",
    "HOST_LAYER_NAMES",
    "LAYER_NAMES",
    "LIMIT_NAMES",
    "PROPERTY_LABELS",
    "PROPERTY_NAMES",
    "IsolationError",
    "LayerStatus",
    "LayerUnavailableError",
]

# Applied by the worker to itself (``isolation``), in this order.
LAYER_NAMES = ("rlimits", "env", "landlock", "caps", "seccomp")
# Applied by the supervisor to each action (``supervisor``, ``actionfs``, ``cgroups``).
ACTION_LAYER_NAMES = ("disk", "memory_cgroup", "pids_cgroup", "action_namespaces")
# Applied by the host to every action (``executor``, ``jail``).
HOST_LAYER_NAMES = ("namespaces", "readonly_binds", "no_root_file_ops", "lock")
# Every property of the sandbox, as ``keiri-agent sandbox doctor`` and each outcome list them.
PROPERTY_NAMES = (*HOST_LAYER_NAMES[:2], *ACTION_LAYER_NAMES, *LAYER_NAMES, *HOST_LAYER_NAMES[2:])
# Each property by what it does, as the app's sidebar names it (LIMIT_NAMES: a limit in a warning).
PROPERTY_LABELS = {
    "namespaces": "隔離された実行環境",
    "readonly_binds": "読み取り専用のファイル",
    "disk": "書き込みの上限",
    "memory_cgroup": "メモリの上限",
    "pids_cgroup": "プロセス数の上限",
    "action_namespaces": "実行ごとの隔離",
    "rlimits": "CPU 時間・メモリ・ファイルの上限",
    "env": "環境変数の入れ替え",
    "landlock": "ファイルと通信の制限",
    "caps": "特権の破棄",
    "seccomp": "システムコールの制限",
    "no_root_file_ops": "ホスト側のファイル操作の制限",
    "lock": "同時実行の制限",
}
# The limits among those properties: what ``sandbox doctor``, ``/readyz`` and each outcome's
# warnings name when one of them is not in force on a machine.
LIMIT_NAMES = {
    "disk": "アクションごとの書き込みの大きさ・ファイル数の上限",
    "memory_cgroup": "アクションごとのメモリ上限（cgroup）",
    "pids_cgroup": "アクションごとのプロセス・スレッド数の上限（cgroup）",
    "rlimits": "CPU 時間・メモリ・ファイルサイズの上限（rlimit）",
}
DEFAULT_HINT = "サンドボックスを実行できない環境です。`keiri-agent doctor` で確認してください。"


class LayerUnavailableError(KeiriError):
    """A layer this machine cannot provide (seccomp, Landlock); ``reason`` says why
    in Japanese.

    Not a failure of the code being run: the caller reports the layer as inactive
    (``LayerStatus.detail`` is the reason) and goes on with the layers that remain.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class LayerStatus:
    """One layer's outcome; ``detail`` is Japanese and shown to users as it is."""

    name: str
    active: bool
    detail: str


class IsolationError(BlockError):
    """A layer that is available failed: the code must not run. ``statuses``: the layers before."""

    default_code = ErrorCode.INTERNAL_ERROR

    def __init__(
        self,
        layer: str,
        message: str,
        *,
        hint: str = DEFAULT_HINT,
        statuses: tuple[LayerStatus, ...] = (),
        details: dict[str, object] | None = None,
    ) -> None:
        applied = [s.name for s in statuses]
        super().__init__(
            f"サンドボックスの隔離（{layer}）に失敗しました: {message}",
            hint=hint,
            details={"layer": layer, "applied": applied, **(details or {})},
        )
        self.layer = layer
        self.statuses = statuses
