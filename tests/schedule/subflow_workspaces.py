"""Seeded workspaces whose plan calls subflows, for the runs that start by themselves.

A case is one team's designs folder and version store: a plan (``keiri/close``) calling one to
three subflows, which call others down to depth 3 (a subflow may be shared by two callers; a
call may sit in a loop body or under a ``when``), each text saved and approved (or not), then
people edit, save, approve, withdraw, delete and rename the working copies between the approval
and the moment a schedule or a trigger fires -- and between its door and its run -- with
approval required or not, the schedule pinned to a version hash (approved or not) or to
``latest-approved``. About a third of the subflows have an ``id`` other than their file's name
(``lib/tax.yaml`` says ``id: tax``): a plan calls the file, the versions are kept under the id,
each save with the file it was saved from (absolute, or as typed from the project's folder or
``designs/``). A working copy may be deleted, renamed, or edited to another ``id`` without
being saved.

The model here is apart from the product: it knows every text it wrote and each version's
standing decision, so it says what a fire must run -- the plan version the pin names, and for
every subflow that plan calls, at any depth, the version of the id its file was saved as
(whatever the working copy says now, or wherever it went): the newest approved one where approval is required or the plan
version is approved, else the newest saved one -- or that the fire must be refused (a called
subflow has none), naming that subflow.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path

from keiri_agent.config import Settings
from keiri_agent.versions import Reviewer, SaveNote, VersionStore, review

PLAN_ID = "keiri/close"
POOL = ["lib/tax", "lib/round", "common/check", "common/notice", "keiri/bank_sub", "lib/fx"]
KATO = Reviewer("kato", True, "approver")


def vid(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Call:
    """One call of a subflow from a plan: plain, in a loop body, or under a ``when``."""

    node: str
    plan_id: str
    shape: str  # "plain" | "loop" | "when"


def _call_yaml(call: Call) -> str:
    plain = (
        f"  - id: {call.node}\n"
        f"    type: subflow\n"
        f"    call: {{plan_id: {call.plan_id}, inputs: {{x: 1}}}}\n"
    )
    if call.shape == "when":
        return plain + '    when: "${vars.flag} == true"\n'
    if call.shape == "loop":
        return (
            f"  - id: {call.node}\n"
            f"    type: loop\n"
            f'    foreach: {{input: "${{vars.items}}", itemVar: it}}\n'
            f"    body:\n"
            f"      plan:\n"
            f"        graph:\n"
            f"          - id: {call.node}_body\n"
            f"            type: subflow\n"
            f'            call: {{plan_id: {call.plan_id}, inputs: {{x: "${{it}}"}}}}\n'
        )
    return plain


ASK = (
    "  - id: ask\n"
    "    block: ui.interactive_input\n"
    "    in:\n"
    "      mode: collect\n"
    "      message: 月次の締めを続けてよいか確認してください\n"
    "      requirements: [{id: ok, type: text, label: 確認}]\n"
)
ANSWERS = {"ask": {"ok": "はい"}}  # what the person answers the paused run


def plan_text(
    plan_id: str, calls: list[Call], revision: int, *, top: bool, pauses: bool = False
) -> str:
    """A plan (``top``: the scheduled one) at a revision; the revision is in what it writes;
    ``pauses``: it asks a person first (:data:`ASK`)."""
    head = "vars:\n  items: [1, 2]\n  flag: true\n" + ('  received: ""\n' if top else "  x: 0\n")
    value = "${vars.flag}" if top else "${vars.x}"
    return (
        f"apiVersion: v1\nid: {plan_id}\n{head}graph:\n"
        + (ASK if pauses else "")
        + f"  - id: note\n"
        f"    block: report.markdown\n"
        f"    in:\n"
        f"      title: {plan_id}\n"
        f'      template: "{plan_id} rev {{{{ r }}}} {{{{ v }}}}"\n'
        f'      data: {{r: "r{revision}", v: "{value}"}}\n'
        + "".join(_call_yaml(c) for c in calls)
        + "exports:\n  - {from: note.markdown, as: memo}\n"
    )


@dataclass
class Doc:
    """One plan of the workspace: its calls (fixed), its texts by revision, their decisions."""

    plan_id: str
    calls: list[Call]
    top: bool = False
    pauses: bool = False  # asks a person first (``ui.interactive_input``): its run pauses
    revisions: int = 0
    saved: list[str] = field(default_factory=list)  # version ids, in the order saved
    status: dict[str, str] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)

    file: str = ""  # the name plans call it by (its file under designs/); "" : its id

    def __post_init__(self) -> None:
        self.file = self.file or self.plan_id

    def text(self, revision: int) -> str:
        return plan_text(self.plan_id, self.calls, revision, top=self.top, pauses=self.pauses)

    def newest(self, approved_only: bool) -> str | None:
        """The version a saved run calls: the newest approved (or saved) one."""
        return self.approved() if approved_only else (self.saved[-1] if self.saved else None)

    def approved(self) -> str | None:
        """The newest version whose approval stands (None: none)."""
        ids = [v for v in self.saved if self.status[v] == "approved"]
        return ids[-1] if ids else None


@dataclass
class Workspace:
    settings: Settings
    docs: dict[str, Doc]
    required: bool
    log: list[str] = field(default_factory=list)  # what people did, for a failure's message

    @property
    def store(self) -> VersionStore:
        return VersionStore.of(self.settings)

    def working(self, plan_id: str) -> Path:
        return Path(self.settings.keiri_designs_dir) / f"{plan_id}.yaml"

    def write(self, plan_id: str, text: str) -> None:
        path = self.working(plan_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def saved_from(self, plan_id: str, revision: int) -> str:
        """The working copy a save records, in one of the forms it is kept in: absolute (the
        app, the API, ``plan save`` now), or as typed from the project's folder or from
        ``designs/`` (``plan save`` before it kept it absolute)."""
        path = self.working(plan_id)
        forms = [
            str(path),
            str(path.relative_to(Path(self.settings.keiri_designs_dir).parent)),
            "./" + str(path.relative_to(Path(self.settings.keiri_designs_dir))),
        ]
        return forms[(revision + len(plan_id)) % len(forms)]

    def save(self, plan_id: str) -> str:
        doc = self.docs[plan_id]
        doc.revisions += 1
        text = doc.text(doc.revisions)
        note = SaveNote(author="sato", source="cli", file=self.saved_from(plan_id, doc.revisions))
        self.store.save(doc.plan_id, text, note)
        version = vid(text)
        doc.saved.append(version)
        doc.status[version] = "pending"
        doc.texts[version] = text
        self.write(plan_id, text)
        self.log.append(f"save {plan_id} r{doc.revisions}")
        return version

    def decide(self, plan_id: str, version: str, kind: str) -> None:
        doc = self.docs[plan_id]
        review(self.store, doc.plan_id, version, kind, KATO, self.settings)  # type: ignore[arg-type]
        self.docs[plan_id].status[version] = "approved" if kind == "approve" else "rejected"
        self.log.append(f"{kind} {plan_id} {version[:6]}")

    def act(self, rnd: random.Random) -> None:
        """One thing people do between the approval and a fire."""
        plan_id = rnd.choice(sorted(self.docs))
        doc = self.docs[plan_id]
        path = self.working(plan_id)
        roll = rnd.random()
        if roll < 0.25:  # the working copy edited, not saved
            doc.revisions += 1
            self.write(plan_id, doc.text(doc.revisions))
            self.log.append(f"edit {plan_id}")
        elif roll < 0.4:
            self.save(plan_id)  # saved, waiting for approval
        elif roll < 0.55:
            self.decide(plan_id, self.save(plan_id), "approve")  # a newer version approved
        elif roll < 0.65 and doc.approved() is not None:
            self.decide(plan_id, doc.approved() or "", "reject")  # an approval withdrawn
        elif roll < 0.72 and path.exists():
            path.unlink()
            self.log.append(f"delete {plan_id}")
        elif roll < 0.86 and path.exists():  # edited to another id, not saved
            text = path.read_text(encoding="utf-8")
            path.write_text(text.replace(f"id: {doc.plan_id}\n", f"id: {doc.plan_id}_new\n", 1))
            self.log.append(f"id-edit {plan_id}")
        elif path.exists():
            path.rename(path.with_name(path.stem + "_old.yaml"))
            self.log.append(f"rename {plan_id}")
        elif doc.saved:  # the working copy put back as an older saved text
            self.write(plan_id, doc.texts[rnd.choice(doc.saved)])
            self.log.append(f"restore {plan_id}")

    def versions_of(self, call: str) -> Doc | None:
        """The plan whose versions a call of ``call`` finds: the id its file was saved as
        (every file here was saved), whatever the working copy says now or where it went."""
        return self.docs[call]

    def reachable(self, plan_id: str) -> list[str]:
        """The subflows ``plan_id`` calls, at any depth, each once, in the order first met."""
        found: list[str] = []
        todo = [c.plan_id for c in self.docs[plan_id].calls]
        while todo:
            sub = todo.pop(0)
            if sub not in found:
                found.append(sub)
                todo += [c.plan_id for c in self.docs[sub].calls]
        return found


@dataclass
class Want:
    """What a start must do: run these texts, or be refused naming ``missing``."""

    plan: str | None  # the plan version's text (None: the start is refused for the plan)
    subflows: dict[str, str]  # by the name called
    missing: list[str]  # subflows with no version to run (the start must name one)
    recorded: dict[str, str] | None = None  # the versions plan_start must name, by plan id


def want(space: Workspace, pin: str) -> Want:
    """What a start of the schedule pinned to ``pin`` must run now (the model's answer)."""
    top = space.docs[PLAN_ID]
    if pin == "working":
        path = space.working(PLAN_ID)
        if not path.exists():
            return Want(None, {}, [])
        subs = {s: space.working(s) for s in space.reachable(PLAN_ID)}
        gone = [sub for sub, sub_path in subs.items() if not sub_path.exists()]
        texts = {sub: p.read_text(encoding="utf-8") for sub, p in subs.items() if sub not in gone}
        return Want(path.read_text(encoding="utf-8"), {} if gone else texts, gone)
    if pin == "latest-approved":
        plan = top.approved()
    else:
        runs = top.status[pin] == "approved" or not space.required
        plan = pin if runs else None
    if plan is None:
        return Want(None, {}, [])
    approved_only = space.required or top.status[plan] == "approved"
    subs, missing, recorded = {}, [], {}
    for sub in space.reachable(PLAN_ID):
        doc = space.versions_of(sub)
        version = doc.newest(approved_only) if doc is not None else None
        if doc is None or version is None:
            missing.append(sub)
        else:
            subs[sub] = doc.texts[version]
            recorded[doc.plan_id] = version
    return Want(top.texts[plan], subs, missing, recorded)


def workspace(
    rnd: random.Random, settings: Settings, required: bool, *, pauses: bool = False
) -> Workspace:
    """A plan calling subflows to depth 1-3, every text saved once, most approved."""
    names = rnd.sample(POOL, rnd.randint(2, 5))
    levels: dict[int, list[str]] = {1: [], 2: [], 3: []}
    for index, name in enumerate(names):
        level = 1 if index == 0 else rnd.choice([1, 1, 2, 2, 3])
        while level > 1 and not levels[level - 1]:
            level -= 1
        levels[level].append(name)
    docs: dict[str, Doc] = {}
    shapes = ["plain", "plain", "loop", "when"]

    def calls_to(children: list[str], wanted: int) -> list[Call]:
        chosen = rnd.sample(children, min(wanted, len(children))) if children else []
        return [Call(f"c{i}", child, rnd.choice(shapes)) for i, child in enumerate(chosen)]

    for level in (3, 2, 1):
        for name in levels[level]:
            below = levels.get(level + 1, [])
            plan_id = name.rsplit("/", 1)[-1] if rnd.random() < 0.35 else name  # id != file
            calls = calls_to(below, rnd.randint(1 if below else 0, 2))
            docs[name] = Doc(plan_id, calls, file=name)
    # Every subflow below level 1 is called by someone (its callers may share it).
    for level in (2, 3):
        for name in levels[level]:
            callers = [docs[n] for n in levels[level - 1]]
            if not any(c.plan_id == name for doc in callers for c in doc.calls):
                doc = rnd.choice(callers)
                doc.calls.append(Call(f"c{len(doc.calls)}", name, rnd.choice(shapes)))
    top_calls = [Call(f"c{i}", name, rnd.choice(shapes)) for i, name in enumerate(levels[1])]
    docs[PLAN_ID] = Doc(PLAN_ID, top_calls, top=True, pauses=pauses)
    space = Workspace(settings, docs, required)
    for plan_id in docs:
        version = space.save(plan_id)
        if plan_id == PLAN_ID or rnd.random() < 0.85:
            space.decide(plan_id, version, "approve")
    return space
