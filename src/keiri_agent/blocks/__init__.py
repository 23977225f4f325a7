"""Blocks: base classes, YAML specs and the registry (seed 002 §4, §10).

One module per block lives in ``keiri_agent.blocks.<category>``; its contract is a YAML file
under ``keiri_agent/block_specs/<category>/``.
"""

from __future__ import annotations

from keiri_agent.blocks.base import (
    Block,
    BlockContext,
    InputProvider,
    InputRequired,
    ProcessingBlock,
    UIBlock,
)
from keiri_agent.blocks.registry import BUILTIN_SPEC_DIR, BlockRegistry, default_registry
from keiri_agent.blocks.semver import SemVer
from keiri_agent.blocks.spec import BlockSpec, port_is_required, port_sample

__all__ = [
    "BUILTIN_SPEC_DIR",
    "Block",
    "BlockContext",
    "BlockRegistry",
    "BlockSpec",
    "InputProvider",
    "InputRequired",
    "ProcessingBlock",
    "SemVer",
    "UIBlock",
    "default_registry",
    "port_is_required",
    "port_sample",
]
