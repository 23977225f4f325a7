"""The vocabulary of the isolation layers: their names, their status, their failure."""

from __future__ import annotations

from dataclasses import dataclass

from keiri_agent.errors import BlockError, ErrorCode

__all__ = ["DEFAULT_HINT", "LAYER_NAMES", "IsolationError", "LayerStatus"]

LAYER_NAMES = ("netns", "rlimits", "env", "landlock", "uid", "seccomp")
DEFAULT_HINT = "サンドボックスを実行できない環境です。`keiri-agent doctor` で確認してください。"


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
