"""The block registry: discovers specs, resolves ``id`` / ``id@version``, loads blocks lazily.

Specs are found under the package's ``block_specs/`` and under any extra directories
(``KEIRI_BLOCK_SPEC_DIRS``). Entry points are imported on first use only, so listing and
validating plans never imports a block's dependencies. Two specs with the same id and version
are refused, naming both files: silently picking one would run code nobody chose.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import sys
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keiri_agent.blocks.base import Block
from keiri_agent.blocks.semver import SemVer, split_block_ref
from keiri_agent.blocks.spec import BlockSpec, load_spec_file
from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of

if TYPE_CHECKING:
    from keiri_agent.config import Settings

__all__ = ["BUILTIN_SPEC_DIR", "BlockRegistry", "default_registry", "settings_registry"]

PACKAGE_ROOT = Path(__file__).resolve().parent.parent  # .../keiri_agent
BUILTIN_SPEC_DIR = PACKAGE_ROOT / "block_specs"
_FOUND_LIMIT = 1024


class BlockRegistry:
    """All known block specs, keyed by id and version, with a "latest" pointer per id."""

    def __init__(self, spec_dirs: Sequence[Path | str] = (), *, builtin: bool = True) -> None:
        self._specs: dict[str, dict[SemVer, BlockSpec]] = {}
        self._roots: dict[str, Path] = {}  # spec.source → the spec dir it was found under
        self._blocks: dict[str, Block] = {}
        self._found: dict[str, BlockSpec | None] = {}  # find()'s answers until the next add()
        self._lock = threading.Lock()
        dirs = ([BUILTIN_SPEC_DIR] if builtin else []) + [Path(d) for d in spec_dirs]
        for directory in dirs:
            self.discover(directory)

    # --- discovery ---------------------------------------------------------------------------

    def discover(self, directory: Path) -> builtins.list[BlockSpec]:
        """Load every ``*.yaml`` / ``*.yml`` under ``directory`` (recursively)."""
        if not directory.is_dir():
            raise _setup_error(
                f"ブロック定義のディレクトリ {directory} が見つかりません。",
                "KEIRI_BLOCK_SPEC_DIRS に存在するディレクトリを指定してください。",
                directory=str(directory),
            )
        # ``schemas/`` holds JSON Schemas for ``$ref: jsonschema://...``, not block specs.
        found = sorted(
            p
            for p in [*directory.rglob("*.yaml"), *directory.rglob("*.yml")]
            if p.relative_to(directory).parts[0] != "schemas"
        )
        specs = [load_spec_file(path) for path in found]
        for spec in specs:
            self.add(spec, root=directory)
        return specs

    def add(self, spec: BlockSpec, *, root: Path | None = None) -> None:
        versions = self._specs.setdefault(spec.id, {})
        existing = versions.get(spec.semver)
        if existing is not None:
            raise _setup_error(
                f"ブロック {spec.ref} が二重に定義されています: {existing.source} と {spec.source}",
                "どちらかのファイルを削除するか、version を上げてください。",
                block=spec.ref,
                files=[existing.source, spec.source],
            )
        versions[spec.semver] = spec
        self._found = {}
        if root is not None and spec.source:
            self._roots[spec.source] = root

    # --- lookup ------------------------------------------------------------------------------

    def __contains__(self, ref: object) -> bool:
        return isinstance(ref, str) and self.find(ref) is not None

    def find(self, ref: str) -> BlockSpec | None:
        """The spec for ``id`` (latest), ``id@1.2.3`` (exact) or ``id@1`` / ``id@1.2`` (pin)."""
        answers = self._found  # add() replaces the dict, never empties this one
        if ref in answers:
            return answers[ref]
        if len(answers) >= _FOUND_LIMIT:  # refs come from plans: keep it bounded
            answers = self._found = {}
        found = answers[ref] = self._find(ref)
        return found

    def _find(self, ref: str) -> BlockSpec | None:
        block_id, version = split_block_ref(ref)
        versions = self._specs.get(block_id)
        if not versions:
            return None
        if version is None:
            return versions[max(versions)]
        try:
            candidates = [v for v in versions if v.matches(version)]
        except ValueError:
            return None
        return versions[max(candidates)] if candidates else None

    def get(self, ref: str) -> BlockSpec:
        spec = self.find(ref)
        if spec is not None:
            return spec
        block_id, _ = split_block_ref(ref)
        known = sorted(str(v) for v in self._specs.get(block_id, {}))
        if known:
            hint = f"{block_id} の利用可能なバージョン: {', '.join(known)}"
        else:
            close = [s.id for s in self.search(block_id, limit=5)]
            hint = "`keiri-agent blocks list` で利用可能なブロックを確認してください。"
            if close:
                hint = f"似た名前のブロック: {', '.join(close)}。" + hint
        return _raise_not_found(ref, hint)

    def versions(self, block_id: str) -> builtins.list[BlockSpec]:
        return [v for _, v in sorted(self._specs.get(block_id, {}).items())]

    def list(
        self, *, all_versions: bool = False, category: str | None = None
    ) -> builtins.list[BlockSpec]:
        """Specs sorted by id (latest version only unless ``all_versions``)."""
        out: builtins.list[BlockSpec] = []
        for block_id in sorted(self._specs):
            versions = self._specs[block_id]
            chosen = (
                [versions[v] for v in sorted(versions)]
                if all_versions
                else [versions[max(versions)]]
            )
            out.extend(s for s in chosen if category is None or s.category == category)
        return out

    def categories(self) -> builtins.list[str]:
        return sorted({s.category for s in self.list()})

    def search(self, query: str, *, limit: int = 20) -> builtins.list[BlockSpec]:
        """Specs whose id, description, tags or port names contain the query's words.

        A plain word match for people browsing the catalog; plan generation has its own ranked
        retrieval (BM25 + embeddings).
        """
        words = [w.lower() for w in query.replace(".", " ").split() if w.strip()]
        if not words:
            return self.list()[:limit]
        scored: list[tuple[int, str, BlockSpec]] = []
        for spec in self.list():
            fields = {
                "id": spec.id.lower(),
                "text": " ".join(
                    [spec.description, *spec.tags, *spec.inputs, *spec.outputs, spec.category]
                ).lower(),
            }
            score = sum(3 * (w in fields["id"]) + (w in fields["text"]) for w in words)
            if score:
                scored.append((-score, spec.id, spec))
        return [s for _, _, s in sorted(scored, key=lambda t: (t[0], t[1]))][:limit]

    # --- loading -----------------------------------------------------------------------------

    def load(self, ref: str) -> Block:
        """The block instance for ``ref``, importing its entry point on first use."""
        spec = self.get(ref)
        with self._lock:
            block = self._blocks.get(spec.ref)
            if block is None:
                block = instantiate(spec, self.root_of(spec))
                self._blocks[spec.ref] = block
            return block

    def root_of(self, spec: BlockSpec) -> Path | None:
        """The spec directory ``spec`` was found under (None for built-in or added specs)."""
        root = self._roots.get(spec.source or "")
        return None if root is None or root.resolve() == BUILTIN_SPEC_DIR else root


def instantiate(spec: BlockSpec, root: Path | None) -> Block:
    """Import ``spec``'s entry point and build the block (also used on remote workers)."""
    target, _, attr = spec.entrypoint.rpartition(":")
    try:
        module = _import(spec, target, root)
        cls = getattr(module, attr)
    except BlockError:
        raise
    except Exception as exc:
        raise _setup_error(
            f"ブロック {spec.ref} の実装 {spec.entrypoint} を読み込めません: {reason_of(exc)}",
            "entrypoint のモジュール名とクラス名、必要なパッケージの導入を確認してください。",
            cause=cause_of(exc),
            block=spec.ref,
            entrypoint=spec.entrypoint,
            source=spec.source,
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, Block)):
        raise _setup_error(
            f"ブロック {spec.ref} の entrypoint {spec.entrypoint} は Block の派生クラスではありません。",
            "ProcessingBlock か UIBlock を継承したクラスを指定してください。",
            block=spec.ref,
            entrypoint=spec.entrypoint,
        )
    if (cls.kind == "ui") != spec.is_ui:
        raise _setup_error(
            f"ブロック {spec.ref} は category '{spec.category}' ですが実装は {cls.kind} ブロックです。",
            "UI ブロック（UIBlock）は category: ui、それ以外は ProcessingBlock にしてください。",
            block=spec.ref,
        )
    return cls(spec)


def _import(spec: BlockSpec, target: str, root: Path | None) -> object:
    if not target.endswith(".py"):
        return importlib.import_module(target)
    # "blocks/ui/interactive_input.py" (seed 002 §4): relative to the package for built-in
    # specs, to the spec directory for others.
    if root is None:
        dotted = "keiri_agent." + target[:-3].replace("/", ".")
        return importlib.import_module(dotted)
    path = (root / target).resolve()
    name = f"keiri_agent_user_blocks.{spec.id.replace('.', '_')}_{abs(hash(path))}"
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise _setup_error(
            f"ブロック {spec.ref} の実装ファイル {path} を読み込めません。",
            "entrypoint のパスをブロック定義ディレクトリからの相対パスで書いてください。",
            block=spec.ref,
            path=str(path),
        )
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    module_spec.loader.exec_module(module)
    return module


def _setup_error(message: str, hint: str, **details: Any) -> BlockError:
    """A CONFIGURATION_ERROR: the block definitions or their code, not a plan, are wrong."""
    return BlockError(message, code=ErrorCode.CONFIGURATION_ERROR, hint=hint, details=details)


def _raise_not_found(ref: str, hint: str) -> BlockSpec:
    raise BlockError(
        f"ブロック '{ref}' は登録されていません。",
        code=ErrorCode.BLOCK_NOT_FOUND,
        hint=hint,
        details={"block": ref},
    )


@lru_cache(maxsize=8)
def _registry_for(dirs: tuple[Path, ...]) -> BlockRegistry:
    return BlockRegistry(dirs)


def settings_registry(settings: Settings, extra_dirs: Iterable[Path | str] = ()) -> BlockRegistry:
    """The built-in specs plus the ``KEIRI_BLOCK_SPEC_DIRS`` of ``settings`` and ``extra_dirs``
    (cached per set of folders)."""
    dirs = tuple(settings.block_spec_dirs()) + tuple(Path(d) for d in extra_dirs)
    return _registry_for(dirs)


def default_registry(extra_dirs: Iterable[Path | str] = ()) -> BlockRegistry:
    """:func:`settings_registry` of the settings read afresh from the environment."""
    from keiri_agent.config import load_settings

    return settings_registry(load_settings(), extra_dirs)
