"""The example business plans and their sample data (``designs/examples/``, ``examples/data/``).

In a source checkout (``pip install -e .``, README command 1) they are read where they live in the
repository. A wheel carries copies under ``keiri_agent/_bundled/`` (``force-include`` in
pyproject.toml), so ``keiri-agent demo`` also works from a plain ``pip install``. Each example
may ship answers for its ``ui.interactive_input`` nodes in ``designs/examples/answers/<name>.yaml``,
with paths relative to the repository root; :func:`example_answers` resolves them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from keiri_agent.errors import BlockError, ErrorCode, input_error
from keiri_agent.plan import load_yaml

__all__ = [
    "example_answers",
    "example_data_dir",
    "example_names",
    "example_path",
    "example_plan",
    "example_title",
    "examples_root",
]

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_ROOT = PACKAGE_DIR / "_bundled"  # a wheel's copy
SOURCE_ROOT = PACKAGE_DIR.parents[1]  # src/keiri_agent → the repository root
PLANS_DIR = Path("designs") / "examples"
ANSWERS_DIR = PLANS_DIR / "answers"
DATA_DIR = Path("examples") / "data"


def examples_root() -> Path:
    """The directory holding ``designs/examples`` and ``examples/data``."""
    for root in (BUNDLED_ROOT, SOURCE_ROOT):
        if (root / PLANS_DIR).is_dir() and (root / DATA_DIR).is_dir():
            return root
    raise BlockError(
        "サンプルの Plan とデータが見つかりません。",
        code=ErrorCode.CONFIGURATION_ERROR,
        hint="リポジトリを取得して `pip install -e .` でインストールしてください"
        "（designs/examples と examples/data が必要です）。",
        details={"searched": [str(BUNDLED_ROOT), str(SOURCE_ROOT)]},
    )


def example_data_dir() -> Path:
    """The sample data the example plans read (the API server's default shared data)."""
    return examples_root() / DATA_DIR


def example_names() -> list[str]:
    return sorted(path.stem for path in (examples_root() / PLANS_DIR).glob("*.yaml"))


def example_plan(name: str) -> Path:
    path = examples_root() / PLANS_DIR / f"{name}.yaml"
    if not path.is_file():
        raise input_error(
            f"サンプル Plan「{name}」はありません。",
            f"使えるサンプル: {', '.join(example_names())}",
            name=name,
        )
    return path


def example_title(name: str) -> str:
    """The example's name as people read it: the first sentence of its plan's description
    (月次売上レポート), else its file name."""
    data = load_yaml(example_plan(name).read_text(encoding="utf-8"))
    text = str(data.get("description") or "") if isinstance(data, Mapping) else ""
    return text.split("。", 1)[0].strip() or name


def example_answers(name: str) -> dict[str, dict[str, Any]]:
    """The shipped answers for an example, file paths made absolute against the examples root."""
    root = examples_root()
    path = root / ANSWERS_DIR / f"{name}.yaml"
    if not path.is_file():
        return {}
    data = load_yaml(path.read_text(encoding="utf-8")) or {}
    return {
        str(node): {key: _resolve(value, root) for key, value in answers.items()}
        for node, answers in data.items()
        if isinstance(answers, Mapping)
    }


def example_path(value: Any) -> Any:
    """A plan default naming a sample file (``examples/...``) as the bundled file's absolute
    path (lists item by item); any other value as written (also when no examples are installed)."""
    if not isinstance(value, str | list):
        return value
    try:
        return _resolve(value, examples_root())
    except BlockError:
        return value


def _resolve(value: Any, root: Path) -> Any:
    """Relative paths into examples/ become absolute; everything else is left as written."""
    if isinstance(value, str) and value.startswith("examples/"):
        return str(root / value)
    if isinstance(value, list):
        return [_resolve(item, root) for item in value]
    return value
