"""Block specs: the YAML I/O contract of one block (seed 002 §4), loaded and checked.

A spec declares ``id``, SemVer ``version``, its Japanese ``label`` (what people read in place of
the id: 表の集計 for ``table.aggregate``), ``entrypoint``, ``inputs`` and ``outputs`` (each port a
JSON Schema with the extensions ``label`` (the port's Japanese name), ``required``, ``default``,
``nullable``, ``examples``, ``dry_run.samples``, ``path`` and ``accept``), ``requirements``,
``description``, ``category`` and ``tags``. Every bundled block and port has a label
(``tests/blocks/test_labels.py``); a custom block without one is named by the one rule of
``block_names`` (its description's first sentence, else its category's words), never its id.
``path: read`` / ``path: write`` marks an input holding a file or folder path the block reads or
writes (the API server checks a ``${vars.x}`` given there before the run; the block itself
reads it through ``BlockContext.access`` in every case). ``accept`` on such a port lists the
file extensions the block reads there (``".csv,.xlsx"``, :func:`port_accept`): the app's
upload field for a value given to that port offers those types only, the designer's file
requirement and docs/blocks.md name them, and the block's "no file given" error is made from
the port (its label, name and these types: ``blocks.inputs.port_path``), so a new file port
needs no text of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from keiri_agent.blocks.block_names import shown_block
from keiri_agent.blocks.folded_text import load_yaml
from keiri_agent.blocks.semver import SemVer
from keiri_agent.blocks.ui.field_types import accepted_extensions
from keiri_agent.errors import BlockError, ErrorCode, cause_of, reason_of
from keiri_agent.llm.field_problems import field_problems, lines_of

__all__ = [
    "NO_SAMPLE",
    "PATH_MODES",
    "BlockSpec",
    "load_spec_file",
    "port_accept",
    "port_is_required",
    "port_sample",
]

BLOCK_ID_RE = re.compile(r"^[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+$")
PORT_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Keys a port may carry beyond JSON Schema itself.
PORT_EXTENSIONS = frozenset(
    {"label", "required", "nullable", "examples", "dry_run", "path", "result", "accept"}
)
MAX_LABEL_CHARS = 30  # a label names a block or port in a tab, a column or a progress line
PATH_MODES = ("read", "write")  # the values of a port's ``path`` extension
NO_SAMPLE: Any = object()  # port_sample's answer when a port declares nothing to sample


class BlockSpec(BaseModel):
    """One block's contract, as loaded from ``block_specs/**/<id>.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    version: str
    label: str | None = Field(default=None, min_length=1, max_length=MAX_LABEL_CHARS)
    entrypoint: str
    description: str
    category: str
    tags: list[str] = Field(default_factory=list)
    inputs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = Field(default_factory=dict)
    requirements: list[Any] = Field(default_factory=list)
    source: str | None = Field(default=None, description="the YAML file this spec came from")

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not BLOCK_ID_RE.match(value):
            raise ValueError(
                f"ブロック ID '{value}' は 'カテゴリ.名前'（小文字・数字・_）の形にしてください"
            )
        return value

    @field_validator("version")
    @classmethod
    def _check_version(cls, value: Any) -> str:
        text = str(value)
        SemVer.parse(text)
        return text

    @field_validator("entrypoint")
    @classmethod
    def _check_entrypoint(cls, value: str) -> str:
        target, sep, attr = value.rpartition(":")
        if not sep or not target or not attr.isidentifier():
            raise ValueError(
                "entrypoint は 'モジュール:クラス' または 'パス.py:クラス' の形にしてください"
            )
        return value

    @field_validator("inputs", "outputs")
    @classmethod
    def _check_ports(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for name, port in value.items():
            if not PORT_NAME_RE.match(name):
                raise ValueError(f"ポート名 '{name}' は英字・数字・_ で書いてください")
            if not isinstance(port, dict):
                raise ValueError(f"ポート '{name}' は JSON Schema（マッピング）で書いてください")
            label = port.get("label", "-")
            if not isinstance(label, str) or not label.strip() or len(label) > MAX_LABEL_CHARS:
                raise ValueError(
                    f"ポート '{name}' の label は日本語の名前（{MAX_LABEL_CHARS} 文字まで）に"
                    "してください"
                )
            samples = port.get("dry_run", {})
            if samples and (
                not isinstance(samples, dict) or not isinstance(samples.get("samples"), list)
            ):
                raise ValueError(
                    f"ポート '{name}' の dry_run は {{samples: [...]}} の形にしてください"
                )
            if "examples" in port and not isinstance(port["examples"], list):
                raise ValueError(f"ポート '{name}' の examples はリストにしてください")
            if "result" in port and not isinstance(port["result"], bool):
                raise ValueError(f"ポート '{name}' の result は true か false にしてください")
            if "path" in port and port["path"] not in PATH_MODES:
                raise ValueError(
                    f"ポート '{name}' の path は {' / '.join(PATH_MODES)} にしてください"
                )
            if "accept" in port and not (
                isinstance(port["accept"], str) and accepted_extensions(port["accept"])
            ):
                raise ValueError(
                    f"ポート '{name}' の accept は \".csv,.xlsx\" のように拡張子をカンマ区切りで"
                    "書いてください"
                )
            if "accept" in port and port.get("path") != "read":
                raise ValueError(
                    f"ポート '{name}' の accept は、読むファイルのパスを受け取る入力"
                    "（path: read）にだけ書けます"
                )
        return value

    @property
    def semver(self) -> SemVer:
        return SemVer.parse(self.version)

    @property
    def ref(self) -> str:
        """``id@version``: the exact reference a plan can pin."""
        return f"{self.id}@{self.version}"

    @property
    def is_ui(self) -> bool:
        """UI blocks wait for a person (seed 002 §3); the runner pauses on them when headless."""
        return self.category == "ui"

    def path_inputs(self) -> dict[str, str]:
        """Input port → ``read`` / ``write`` for the ports that hold a path."""
        return {name: str(port["path"]) for name, port in self.inputs.items() if "path" in port}

    @property
    def shown_name(self) -> str:
        """What people read for this block: its label, else words (``block_names``), never its id."""
        return shown_block(self.label, self.description, self.category)

    def port_label(self, name: str) -> str:
        """The Japanese name of input or output port ``name`` (the name itself when the block
        has no such port: a plan that no longer validates still shows its values)."""
        port = self.inputs.get(name) or self.outputs.get(name) or {}
        return str(port.get("label") or name)

    def is_result(self, name: str) -> bool:
        """Whether output ``name`` is a result people read (``result: false``: a contract for
        another block, such as the questions a ``ui.interactive_input`` asks)."""
        return bool(self.outputs.get(name, {}).get("result", True))

    def required_inputs(self) -> list[str]:
        return [name for name, port in self.inputs.items() if port_is_required(port)]

    def catalog_entry(self) -> dict[str, Any]:
        """The compact form shown to people and to the plan generator."""
        return {
            "id": self.id,
            "version": self.version,
            "label": self.shown_name,
            "category": self.category,
            "description": self.description.strip(),
            "inputs": {n: _port_summary(p) for n, p in self.inputs.items()},
            "outputs": {n: _port_summary(p) for n, p in self.outputs.items()},
            "tags": list(self.tags),
        }


def _port_summary(port: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": port.get("type", port.get("$ref", "any"))}
    if "label" in port:
        out["label"] = port["label"]
    if port_is_required(port):
        out["required"] = True
    if "description" in port:
        out["description"] = port["description"]
    return out


def port_is_required(port: dict[str, Any]) -> bool:
    """A port is required when it says ``required: true`` and declares no ``default``."""
    # ``required: [a, b]`` inside a port is JSON Schema's (object properties), not ours.
    return port.get("required") is True and "default" not in port


def port_accept(port: Mapping[str, Any]) -> list[str]:
    """The file extensions path port ``port`` reads (its ``accept``: ``[".csv", ".xlsx"]``);
    empty when it names none (any type)."""
    accept = port.get("accept")
    return accepted_extensions(accept) if isinstance(accept, str) else []


def port_sample(port: dict[str, Any]) -> Any:
    """The value a dry run uses: ``dry_run.samples[0]``, else ``examples[0]``, else ``default``.

    Returns :data:`NO_SAMPLE` when none is declared: dry runs fail on it (seed 002 §7).
    """
    samples = (port.get("dry_run") or {}).get("samples") or []
    if samples:
        return samples[0]
    examples = port.get("examples") or []
    if examples:
        return examples[0]
    if "default" in port:
        return port["default"]
    return NO_SAMPLE


def _spec_error(path: Path, problem: str, *, details: dict[str, Any] | None = None) -> BlockError:
    return BlockError(
        f"ブロック定義 {path} を読み込めません: {problem}",
        code=ErrorCode.CONFIGURATION_ERROR,
        hint="block_specs の YAML を決まった形（id, version, label, entrypoint, inputs, outputs,"
        " description, category）に直してください。",
        details={"file": str(path), **(details or {})},
    )


def load_spec_file(path: Path) -> BlockSpec:
    """Read and check one spec file (BlockError naming the file and the field otherwise)."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _spec_error(path, reason_of(exc), details={"cause": cause_of(exc)}) from exc
    if not isinstance(data, dict):
        raise _spec_error(path, "先頭がマッピングではありません")
    try:
        return BlockSpec.model_validate({**data, "source": str(path)})
    except ValidationError as exc:
        # Said in Japanese (a check's own text; Pydantic's English never reaches a person).
        problems = "; ".join(lines_of(field_problems(exc, data=data)))
        raise _spec_error(
            path, problems, details={"errors": exc.errors(include_url=False)}
        ) from exc
