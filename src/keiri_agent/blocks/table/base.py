"""The shape every table block shares: settings from the inputs, then the tables.

A :class:`TableBlock` names its table inputs in ``tables``; :meth:`TableBlock.configure` reads
and checks the rest of its inputs. ``check_inputs`` runs both before the plan runs (settings
first, so a wrong setting is reported before a wrong table), and ``run`` hands the checked
settings and the tables (:class:`~keiri_agent.documents.table_value.Table`: records with the
file position of each row, for errors) to :meth:`TableBlock.compute`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from keiri_agent.blocks.base import BlockContext, ProcessingBlock
from keiri_agent.blocks.table.records import Table, table_from

__all__ = ["Records", "Table", "TableBlock"]

Records = list[dict[str, Any]]
ConfigT = TypeVar("ConfigT")


class TableBlock(ProcessingBlock, Generic[ConfigT]):
    """A processing block over the tables named in ``tables``, with settings of type ConfigT."""

    tables: ClassVar[tuple[str, ...]] = ("table",)

    @abstractmethod
    def configure(self, inputs: Mapping[str, Any]) -> ConfigT:
        """The block's settings read from ``inputs`` (BlockError naming the wrong input)."""

    @abstractmethod
    def compute(self, cfg: ConfigT, tables: list[Table], ctx: BlockContext) -> dict[str, Any]:
        """The outputs, from the settings and ``tables`` (in the order of ``tables``)."""

    def check_inputs(self, inputs: dict[str, Any]) -> None:
        self.configure(inputs)
        self._tables(inputs)

    def run(self, inputs: dict[str, Any], ctx: BlockContext) -> dict[str, Any]:
        cfg = self.configure(inputs)
        return self.compute(cfg, self._tables(inputs), ctx)

    def _tables(self, inputs: Mapping[str, Any]) -> list[Table]:
        return [table_from(inputs.get(name), field=name) for name in self.tables]
