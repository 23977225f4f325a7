"""What validate, dry-run and run of one command read besides the plan: one :class:`PlanEnv`.

A command (a CLI command, an API request, an action in the app) builds one ``PlanEnv`` and hands
it to every phase: the block registry, the designs folder that subflow ids resolve under, the
mapping behind ``${config.*}``, the mapping behind ``${env.*}``, the settings, and the one subflow
loader, so that the dry run and the run read exactly the subflow files validation read.
:meth:`PlanEnv.of` is the one place their defaults come from (the settings' ``KEIRI_DESIGNS_DIR``
and ``KEIRI_PLAN_CONFIG``, the process environment, the built-in blocks with the settings'
``KEIRI_BLOCK_SPEC_DIRS``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypedDict, Unpack

from keiri_agent.blocks.registry import BlockRegistry, settings_registry
from keiri_agent.errors import ConfigurationError, cause_of, reason_of
from keiri_agent.events.models import type_label
from keiri_agent.plan._dsl.loader import PlanSource, load_yaml
from keiri_agent.plan._graph.saved import SavedSubflows
from keiri_agent.plan._graph.subflows import SubflowLoader

if TYPE_CHECKING:
    from keiri_agent.config import Settings

__all__ = ["EnvOptions", "PlanEnv", "load_config"]

_CONFIG_HINT: Final = "KEIRI_PLAN_CONFIG に YAML ファイルのパスを指定してください。"


def load_config(path: Path | None) -> dict[str, Any]:
    """The mapping behind ``${config.*}`` (empty without a file, or from an empty file); a file
    that cannot be read, is not YAML or whose top is not a mapping is a ConfigurationError
    (never an empty config: a plan would run without the values its author set)."""
    if path is None:
        return {}
    import yaml

    try:
        data = load_yaml(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigurationError(
            f"設定ファイル {path} を読めません: {reason_of(exc)}",
            hint=_CONFIG_HINT,
            details={"file": str(path), "cause": cause_of(exc)},
        ) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigurationError(
            f"設定ファイル {path} の中身が「項目名: 値」の並び（YAML のマッピング）ではありません"
            f"（いちばん上が{type_label(data)}です）。",
            hint=f"{_CONFIG_HINT} 例: 「tax_rate: 0.1」のように 1 行に 1 項目を書きます。",
            details={"file": str(path), "top": type(data).__name__},
        )
    return data


class EnvOptions(TypedDict, total=False):
    """What a caller may set instead of the defaults of :meth:`PlanEnv.of`."""

    settings: Settings
    designs_dir: Path
    config: Mapping[str, Any]
    env: Mapping[str, str]  # the ``${env.*}`` source


@dataclass(frozen=True)
class PlanEnv:
    """The surroundings of one command's plan phases; build it once (:meth:`of`)."""

    registry: BlockRegistry
    settings: Settings
    designs_dir: Path
    # The two value sources stay out of the repr: their values may be secrets (a test's
    # failure, a log line or a debugger would print the whole environment).
    config: Mapping[str, Any] = field(repr=False)  # behind ${config.*}
    environ: Mapping[str, str] = field(repr=False)  # behind ${env.*}
    subflows: SubflowLoader  # shared by validate, dry-run and run of the command

    @classmethod
    def of(cls, registry: BlockRegistry | None = None, **options: Unpack[EnvOptions]) -> PlanEnv:
        """The one place the defaults come from: ``settings`` read afresh; ``registry`` the
        built-in blocks and the settings' ``KEIRI_BLOCK_SPEC_DIRS``; ``designs_dir`` and
        ``config`` from the settings; ``env`` the process environment."""
        from keiri_agent.config import load_settings

        settings = options.get("settings") or load_settings()
        designs = Path(options.get("designs_dir") or settings.keiri_designs_dir)
        config = options.get("config")
        environ = options.get("env")
        return cls(
            registry=registry if registry is not None else settings_registry(settings),
            settings=settings,
            designs_dir=designs,
            config=dict(config) if config is not None else load_config(settings.keiri_plan_config),
            environ=environ if environ is not None else os.environ,
            subflows=SubflowLoader(designs),
        )

    @classmethod
    def given(
        cls, registry: BlockRegistry | PlanEnv | None, **options: Unpack[EnvOptions]
    ) -> PlanEnv:
        """A phase's ``PlanEnv``: the one its caller built, else one :meth:`of` its arguments
        (a registry and options: the convenience of tests and one-off calls)."""
        if isinstance(registry, PlanEnv):
            if options:
                raise TypeError(f"a PlanEnv takes no options besides it: {sorted(options)}")
            return registry
        return cls.of(registry, **options)

    def fresh(self, *, pinned: Path | None = None) -> PlanEnv:
        """The same surroundings with a new subflow loader: a runner's next run reads the
        files anew; ``pinned`` is the folder of subflow texts a resumed run kept. A run of a
        saved version kept there what its door resolved: the continuation runs those
        versions, their standing looked at now (``SavedSubflows.reopen``, or its refusal)."""
        saved = SavedSubflows.reopen(self.settings, pinned)
        return replace(self, subflows=self.subflows.again(pinned=pinned, saved=saved))

    def saved_subflows(self, source: PlanSource, *, kept: Path | None = None) -> PlanEnv:
        """The same surroundings for a run of a saved version (``source``, its text) that
        started by itself (a schedule, a trigger): its subflows are saved versions, resolved
        once and held to the plan version's standing, never the working copies
        (``plan._graph.saved``); the plan's approval is checked here. ``kept``: the folder
        where an earlier attempt of the same start kept what its door resolved (a retry):
        those versions are reopened, not resolved anew."""
        saved = SavedSubflows.reopen(self.settings, kept) or SavedSubflows.door(
            self.settings, source
        )
        return replace(self, subflows=SubflowLoader(self.designs_dir, saved=saved))
