"""Prompts of plan generation (seed 004 §5.1, §6). Override any of them with ``DesignPrompts``.

System: the design engine's role and the rules. Human: the instruction, the normalized documents
(or the explicit "no documents provided" signal), the Top-K catalog, the selected templates, and
for stage 2 the fixed skeleton; a repair turn adds the error summary, spec excerpts, the diff and
the previous output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from keiri_agent.blocks.catalog import port_kind
from keiri_agent.blocks.registry import BlockRegistry
from keiri_agent.blocks.spec import port_is_required
from keiri_agent.privacy import Ours, compose

__all__ = ["FREE_FORM", "NO_DOCUMENTS", "DesignPrompts", "catalog_text", "context_text"]

NO_DOCUMENTS = "no documents provided（参考資料なし）"

SYSTEM = """あなたは経理・バックオフィス業務の業務設計エンジンです。利用者の指示と参考資料から、
keiri-agent の Plan（YAML DSL v1）を設計します。次の制約を必ず守ってください。
- 使えるブロックは「候補ブロック」に挙げたものだけです。それ以外のブロック ID を作らないでください。
- 各ブロックの in / out のキーは、そのブロックの入力・出力の名前だけです。
- ノードの出力は ${{ノードID.出力名}}（out で別名を付けたときは別名）で参照します。
- 決められない値は ${{vars.名前}} で参照し、vars に必ず定義します（不明な値は null）。
  各 vars には ui.vars で利用者が読む日本語の名前を付けます（例: fee_tolerance → 差し引かれてもよい振込手数料の上限（円））。
- ファイルや利用者の判断が必要なら、先頭に ui.interactive_input（mode: collect）を置いて集めます。
- ai.process_llm には空でない output_schema と、prompt か instruction のどちらかが必要です。
- 条件は when、繰り返しは type: loop（foreach / while）、別 Plan の呼び出しは type: subflow で書きます。
- 出力は指定された JSON 形式だけで返してください。説明文は reasoning に短く書きます。"""

SKELETON = """## 段1: 骨子を決める
指示を満たす Plan の骨子（入力→変換→出力の流れ、各ステップのブロック、必要な UI、
ループ・サブフローの有無）を決めてください。指示と資料だけでは決められない重要な事項があれば
missing_information に質問として挙げてください（推測で埋めないこと）。

## 指示
{instruction}
{answers}
## 参考資料
{documents}

## 候補ブロック
{catalog}
{templates}"""

WIRING = """## 段2: 配線する
次の骨子を固定したまま、各ノードの in / out を配線して Plan 全体を返してください。
入力の値は型と語彙が合う出力への参照にし、テンプレートの契約（imports / exports）に従います。
曖昧な値は ${{vars.名前}} とし、vars に定義してください。{options}

## 指示
{instruction}
{answers}
## 骨子
{skeleton}

## 参考資料
{documents}

## 候補ブロック
{catalog}
{templates}"""

REPAIR = """## 修正依頼（{attempt} 回目の出力）
前回の Plan は{kind}で問題が見つかりました。エラーをすべて直した Plan 全体を、同じ形式で返してください。
骨子（ノードの流れ）は変えず、エラーのある箇所だけを直してください。

### エラー
{errors}

### 関係するブロックの仕様
{specs}
{diff}{contracts}
### 前回の出力
```yaml
{previous}
```"""


FREE_FORM = """## 出力形式
ツール呼び出しは使わず、次の JSON Schema に合う JSON オブジェクトを 1 つだけ、```json で囲んで返してください。
```json
{schema}
```"""


@dataclass(frozen=True)
class DesignPrompts:
    """The prompt templates; ``str.format`` fields are named in each default."""

    system: str = SYSTEM
    skeleton: str = SKELETON
    wiring: str = WIRING
    repair: str = REPAIR

    def system_text(self) -> str:
        """The system prompt, marked the product's own text (``privacy.ours``: never masked)."""
        return compose(Ours(self.system))


def _port_line(name: str, port: Mapping[str, Any], *, inputs: bool) -> str:
    # port_kind names the choices and, for a file path, whether the block reads or writes it
    # and which file types it reads: a plan that hands a PDF to a CSV reader fails at run time.
    flag = ("必須" if port_is_required(dict(port)) else "任意") if inputs else ""
    description = " ".join(str(port.get("description") or "").split())[:100]
    parts = [port_kind(port)] + ([flag] if flag else [])
    return f"    - {name} ({', '.join(parts)}): {description}"


def catalog_text(registry: BlockRegistry, block_ids: Sequence[str]) -> str:
    """The candidate blocks as the LLM sees them: id, description, inputs, outputs (the
    product's own text: the prompts mark it so, ``privacy.ours``)."""
    parts: list[str] = []
    for block_id in block_ids:
        spec = registry.get(block_id)
        description = " ".join(spec.description.split())
        lines = [f"- {spec.id}: {description}", "  入力:"]
        lines += [_port_line(n, p, inputs=True) for n, p in spec.inputs.items()]
        lines.append("  出力:")
        lines += [_port_line(n, p, inputs=False) for n, p in spec.outputs.items()]
        parts.append("\n".join(lines))
    return "\n".join(parts)


def context_text(answers: Mapping[str, Any]) -> str:
    """Answers from the design chat, as confirmed facts for the next round."""
    if not answers:
        return ""
    lines = [f"- {key}: {json.dumps(value, ensure_ascii=False)}" for key, value in answers.items()]
    return compose(Ours("\n## 利用者に確認済みの事項\n"), "\n".join(lines), Ours("\n"))
