"""What masking personal data costs a plan run over a large customer table (issue 37).

One plan over a generated customer CSV of ``--rows`` rows (default 100,000; personal columns
氏名, 携帯電話, メールアドレス, 振込口座 with a distinct value on nearly every row, and 地域,
売上金額, 購入日): ``file.read_table`` → ``table.filter`` → ``ai.analyze_data`` on the filtered
table (the analysis agent: the table's personal columns are learnt by header, the preview and
the printed output are masked, the code runs on the real data in the sandbox). The model is the
scripted OpenAI-compatible server of ``tests/support`` (a dev checkout), so what is measured is
the product's own work. Each repeat runs the plan with ``KEIRI_LLM_MASK_PII=off`` and ``on`` in
the same process, alternating, and prints the wall time of the run and of the analysis node,
and the ratio on/off (the machine is shared: compare the ratio, not the seconds).

    python benchmarks/pii_plan.py            # --rows 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SURNAMES = [
    "佐藤",
    "鈴木",
    "高橋",
    "田中",
    "伊藤",
    "渡辺",
    "山本",
    "中村",
    "小林",
    "加藤",
    "吉田",
    "山田",
    "佐々木",
    "山口",
    "松本",
    "井上",
    "木村",
    "林",
    "斎藤",
    "清水",
]
GIVEN = [
    "翔太",
    "美咲",
    "優子",
    "一郎",
    "陽菜",
    "大輝",
    "花子",
    "健太",
    "由美",
    "直樹",
    "結衣",
    "蓮",
    "葵",
    "湊",
    "凛",
    "陽翔",
    "美優",
    "悠真",
    "彩",
    "拓海",
]
REGIONS = ["関東", "関西", "九州", "東北"]

PLAN = """\
apiVersion: v1
id: bench_pii_plan
version: 1.0.0
vars:
  path: {path}
graph:
  - id: read
    block: file.read_table
    in:
      path: ${{vars.path}}
    out:
      rows: customers
  - id: large
    block: table.filter
    in:
      table: ${{read.customers}}
      conditions:
        - {{ column: 売上金額, op: ge, value: 20000 }}
    out:
      rows: large
  - id: analyze
    block: ai.analyze_data
    in:
      question: 地域別の顧客数と売上合計を見せて
      tables:
        customers: ${{large.large}}
    out:
      report: report
"""
CODE = """print(df.head(10).to_string())
print(df.groupby("地域")["売上金額"].agg(["count", "sum"]).to_string())
"""
REPORT = {
    "title": "地域別の顧客数",
    "conclusion": "地域別に集計しました。",
    "evidence": ["地域別の件数と合計"],
    "sections": [],
    "suggestions": [],
}


def make_customers(path: Path, rows: int, seed: int = 37) -> None:
    rng = random.Random(seed)
    lines = ["顧客ID,氏名,携帯電話,メールアドレス,振込口座,地域,売上金額,購入日"]
    for n in range(rows):
        name = f"{rng.choice(SURNAMES)} {rng.choice(GIVEN)}{'' if n < 400 else n % 97}"
        lines.append(
            f"C{n + 1:06d},{name},090-{n // 10000:04d}-{n % 10000:04d},c{n:06d}@example.jp,"
            f"普通 {3000000 + n:07d},{REGIONS[n % 4]},{rng.randint(1, 60) * 1000},"
            f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_once(plan: Path, server: Any, mask: bool) -> dict[str, float]:
    from keiri_agent.blocks.registry import default_registry
    from keiri_agent.events import read_events
    from keiri_agent.events.models import NodeComplete
    from keiri_agent.plan import PlanRunner

    os.environ["KEIRI_LLM_MASK_PII"] = "on" if mask else "off"
    server.add_chat(json={"next_action": "act", "instruction": "集計", "rationale": "r"})
    server.add_chat(json={"code": CODE, "expected_outputs": []})
    server.add_chat(json={"next_action": "finalize", "rationale": "十分"})
    server.add_chat(json=REPORT)
    started = time.perf_counter()
    with PlanRunner(default_registry(), runs_dir=plan.parent / "runs") as runner:
        result = runner.run(plan)
    wall = time.perf_counter() - started
    if result.status != "success":
        raise SystemExit(f"run failed: {result.error}")
    assert result.log_path is not None
    nodes = {
        e.node_id: e.duration_ms / 1000
        for e in read_events(result.log_path)
        if isinstance(e, NodeComplete) and e.node_id is not None
    }
    sent = json.dumps(server.chat_requests()[-4:], ensure_ascii=False)
    if mask and "090-0000-0000" in sent:
        raise SystemExit("masking on, yet the first phone number reached the model")
    return {"wall": wall, "analyze": nodes["analyze"], "masked": sum(result.masked.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from tests.support.llm_server import ScriptedLLMServer  # dev checkout only

    work = Path(tempfile.mkdtemp(dir="/tmp", prefix="keiri-bench-pii-"))
    work.chmod(0o755)  # the sandbox's uid must reach the workspace
    server = ScriptedLLMServer().start()
    try:
        os.environ.update(
            OPENAI_BASE_URL=server.url,
            OPENAI_API_KEY="sk-benchmark-scripted",
            KEIRI_LLM_MODEL="openai:scripted-model",
            KEIRI_WORKSPACE_ROOT=str(work / "ws"),
            NO_PROXY="127.0.0.1,localhost",
        )
        os.chdir(work)
        source = work / "顧客.csv"
        make_customers(source, args.rows)
        plan = work / "plan.yaml"
        plan.write_text(PLAN.format(path=source), encoding="utf-8")
        run_once(plan, server, mask=False)  # warm: imports, Sudachi, the sandbox
        times: dict[bool, list[dict[str, float]]] = {False: [], True: []}
        for _ in range(args.repeat):
            for mask in (False, True):
                times[mask].append(run_once(plan, server, mask))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    print(f"rows: {args.rows:,}, repeats: {args.repeat} (median)\n")
    print("| masking | run s | ai.analyze_data s | values masked |")
    print("|---|---:|---:|---:|")
    for mask in (False, True):
        runs = times[mask]
        wall = statistics.median(r["wall"] for r in runs)
        node = statistics.median(r["analyze"] for r in runs)
        masked = int(max(r["masked"] for r in runs))
        print(f"| {'on' if mask else 'off'} | {wall:.2f} | {node:.2f} | {masked:,} |")
    off = statistics.median(r["wall"] for r in times[False])
    on = statistics.median(r["wall"] for r in times[True])
    print(f"\nrun time on/off: {on / off:.2f}x")


if __name__ == "__main__":
    main()
