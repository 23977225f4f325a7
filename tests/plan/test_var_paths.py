"""Which vars reach a block as a path, known before the run (the API server checks them at
its door): ports marked ``path`` in their spec given exactly ``${vars.x}``, in loop bodies
too; a path made from a var inside a text, or a var passed into a subflow, is not seen here
(the block checks it when it runs)."""

from __future__ import annotations

import pytest

from keiri_agent.blocks.registry import default_registry
from keiri_agent.blocks.spec import BlockSpec
from keiri_agent.plan import Plan, var_paths
from keiri_agent.plan._graph.path_inputs import VarPath

PLAN = {
    "apiVersion": "v1",
    "id": "paths",
    "vars": {"src": "a.csv", "out": "r.md", "many": ["a.txt"], "folder": "x", "n": 3},
    "graph": [
        {"id": "read", "block": "file.read_table", "in": {"path": "${vars.src}"}},
        {"id": "text", "block": "file.extract_text", "in": {"paths": ["${vars.many}", "b.txt"]}},
        {"id": "made", "block": "file.read_table", "in": {"path": "${vars.folder}/a.csv"}},
        {
            "id": "each",
            "type": "loop",
            "foreach": {"input": [1], "itemVar": "item"},
            "body": {
                "plan": {
                    "graph": [
                        {
                            "id": "write",
                            "block": "report.markdown",
                            "in": {"template": "${vars.n}", "output_path": "${vars.out}"},
                        }
                    ]
                }
            },
        },
        {
            "id": "sub",
            "type": "subflow",
            "call": {"plan_id": "inner", "inputs": {"p": "${vars.src}"}},
        },
    ],
}


def test_vars_given_to_path_ports_are_found_with_how_they_are_used() -> None:
    found = var_paths(Plan.model_validate(PLAN), default_registry())
    assert found == {
        "src": [VarPath("read", "path", "read")],
        "many": [VarPath("text", "paths", "read")],
        "out": [VarPath("write", "output_path", "write")],
    }
    # each use names its port as people read it (the 実行 page labels a file var with it)
    assert [use.label for uses in found.values() for use in uses] == [
        "表のファイル",
        "読み込むファイル",
        "出力ファイル",
    ]


def test_a_spec_marks_a_path_port_only_as_read_or_write() -> None:
    spec = default_registry().get("data.convert")
    assert spec.path_inputs() == {"source": "read", "out_dir": "write"}
    raw = spec.model_dump(exclude={"source"})
    raw["inputs"]["source"]["path"] = "delete"
    with pytest.raises(ValueError, match="path は read / write"):
        BlockSpec.model_validate(raw)


def test_each_use_carries_the_file_types_its_port_reads() -> None:
    found = var_paths(Plan.model_validate(PLAN), default_registry())
    # each read port names what it reads; a written file names none
    assert [use.accept for uses in found.values() for use in uses] == [
        ".csv,.tsv,.txt,.xlsx,.xlsm",
        ".pdf,.docx,.xlsx,.xlsm,.pptx,.txt,.md,.csv,.tsv,.json,.html,.htm",
        "",
    ]


@pytest.mark.parametrize("accept", ["", "text/*", 3])
def test_a_spec_names_the_file_types_of_a_port_only_as_extensions(accept: object) -> None:
    raw = default_registry().get("file.read_table").model_dump(exclude={"source"})
    raw["inputs"]["path"]["accept"] = accept
    with pytest.raises(ValueError, match=r"accept は .*拡張子をカンマ区切りで"):
        BlockSpec.model_validate(raw)
