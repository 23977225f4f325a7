// The progress page (seed 003 §3): send a request, follow its SSE events, show the answer.
//
// Front-end policy of the seed: the log console is shown only while the task runs and is never
// part of the final answer; the steps are interpret → fetch → convert/viz → finish (+ done),
// labelled for the task's kind (text.js); an `error` event shows a red banner and ends the run,
// except an error of a step the agent tries again (its generated code failed): the log says it.
// A failed code step is shown by the Japanese reason the server sends with it (`reason`);
// Python's own output stays behind a 詳細 toggle in the log.
// A task that ends `unverified` (an analysis whose report no computed output backs) shows an
// amber warning band and its answer, never the success look.
// Files chosen in the form are uploaded with the request (multipart); a plan run that waits for
// input shows an answers form (answers.js) whose answers continue the same task and stream.
// In plan mode the page lists the plans the server offers (GET /agent/plans) by their Japanese
// names; the chosen plan's inputs are a form at once (files uploaded with the request), or, for
// a bundled example, its sample data when the person ticks サンプルデータを使う: a plan never runs
// on sample data unasked. Nodes are named by the plan's names, never by id. A plan's reports are
// shown as the HTML pages the server made (charts inside) in a sandboxed frame.
// Plain JS, no build step.
//
// Authentication: the API key typed into the page is kept in memory and sent as
// `Authorization: Bearer` with fetch(). EventSource and download links cannot send headers, so
// they carry the per-task `token` that POST /agent/run returns (it opens only that task).
//
// Times: the task's times are stored in UTC; the server sends each as people read it
// (`local_times`, in KEIRI_TIMEZONE with the zone named), and the page shows that text as is.
"use strict";

const STEP_SLOTS = { interpret: 0, fetch: 1, convert: 2, viz: 2, finish: 3, done: 4 };
const STEP_COUNT = 5;
const STEP_CLASSES = ["active", "done", "failed", "unverified"];
const NODE_EVENTS = {
  plan_start: () => "Plan を開始しました",
  node_start: (d) => `▶ ${nodeName(d.node_id)} 開始`,
  node_complete: (d) => `✓ ${nodeName(d.node_id)} 完了（${((d.duration_ms || 0) / 1000).toFixed(1)} 秒）`,
  node_skipped: (d) => `- ${nodeName(d.node_id)} スキップ`,
  node_error: (d) => `✗ ${nodeName(d.node_id)} エラー: ${(d.error || {}).message || ""}`,
  node_waiting: (d) => `⏸ ${nodeName(d.node_id)} 入力待ち`,
  plan_complete: (d) => `Plan 終了（${PLAN_STATUS[d.status] || d.status}）`,
};

const $ = (id) => document.getElementById(id);
const state = { source: null, taskId: null, token: null, kind: "convert", slot: -1, percent: 0, failed: false, plans: [], names: {} };

// A node as the plan names it: loop[2]/extract is extract's name.
function nodeName(nodeId) {
  const id = String(nodeId || "");
  const tail = id.split("/").pop().replace(/\[[^\]]*\]$/, "");
  return state.names[id] || state.names[tail] || id;
}

function authHeaders() {
  const key = $("api-key").value.trim();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

function withToken(url) {
  if (!state.token) return url;
  return url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(state.token);
}

// A banner (id) shows message in a `tag` element, then the hint on its own line.
function fillBanner(id, tag, message, hint) {
  const banner = $(id);
  const text = document.createElement(tag);
  setRichText(text, message);
  banner.replaceChildren(text);
  if (hint) {
    const help = document.createElement("span");
    setRichText(help, hint);
    banner.append(document.createTextNode("\nヒント: "), help);
  }
  banner.hidden = false;
}

function showBanner(message, hint) {
  fillBanner("error-banner", "span", message, hint);
}

function showWarning(message, hint) {
  fillBanner("warning-banner", "strong", message, hint);
}

function showNotice(message) {
  setRichText($("notice"), message);
  $("notice").hidden = false;
}

function appendLog(line, detail) {
  const log = $("log");
  log.append(document.createTextNode(plainText(line) + "\n"));
  if (detail) {  // the program's own text (Python's), for whoever wants it: folded
    const fold = document.createElement("details");
    const summary = document.createElement("summary");
    summary.textContent = "詳細（プログラムの出力）";
    const body = document.createElement("div");
    body.textContent = detail.trimEnd();
    fold.append(summary, body);
    log.append(fold);
  }
  log.scrollTop = log.scrollHeight;
}

// A code step's outcome: its printed output, or why it failed in Japanese with Python's text folded.
function logCodeRun(d) {
  if (d.success !== false) {
    appendLog(`${stageLabel(state.kind, "code_exec")}: 成功\n${d.stdout || ""}`.trimEnd());
    return;
  }
  const reason = d.reason ? `（${d.reason}）` : "";
  appendLog(`${stageLabel(state.kind, "code_exec")}: 失敗${reason}`, `${d.stdout || ""}${d.stderr || ""}`);
}

function setPercent(percent) {
  state.percent = Math.max(state.percent, Math.min(100, Math.round(percent)));
  $("progress").value = state.percent;
  $("progress-label").textContent = `${state.percent}%`;
}

function markSteps(slot, status) {
  state.slot = Math.max(state.slot, slot);
  document.querySelectorAll("#steps li").forEach((li, index) => {
    li.classList.remove(...STEP_CLASSES);
    if (index < state.slot || (index === state.slot && status === "done")) li.classList.add("done");
    else if (index === state.slot) li.classList.add(STEP_CLASSES.includes(status) ? status : "active");
  });
}

function labelSteps(kind) {
  document.querySelectorAll("#steps li").forEach((li) => { li.textContent = stageLabel(kind, li.dataset.step); });
}

function onStage(data) {
  if (data.step === "queued") {
    showNotice("順番待ちです。実行中のタスクが終わると始まります。");
    return;
  }
  if (state.slot < 0) $("notice").hidden = true;  // no longer queued
  const slot = STEP_SLOTS[data.step];
  if (slot === undefined) {  // an agent's own step names (reason, code_exec, ...): log only
    appendLog(`[${stageLabel(state.kind, data.step)}] ${statusLabel(data.status)}`);
    return;
  }
  $("notice").hidden = true;
  markSteps(slot, data.status);
  const fallback = ((data.status === "done" ? slot + 1 : slot) / STEP_COUNT) * 100;
  setPercent(typeof data.progress === "number" ? data.progress * (STEP_COUNT - 1) / STEP_COUNT * 100 : fallback);
}

function onError(data) {
  if (data.continues) return;  // the agent tries again (server/event_words.py); its code_exec line said why
  state.failed = true;
  const where = data.step ? `（${stageLabel(state.kind, data.step)}）` : "";
  showBanner(`エラー${where}: ${data.message}`, (data.error || {}).hint);
  if (state.slot >= 0) markSteps(state.slot, "failed");
}

// 受付 (and 終了 once it has ended) as the server wrote them for people: local time, labelled.
function showTimes(task) {
  const times = (task || {}).local_times || {};
  if (!times.created_at) return;
  $("task-times").textContent = `受付 ${times.created_at}` + (times.finished_at ? `・終了 ${times.finished_at}` : "");
  $("task-times").hidden = false;
}

async function finish(data) {
  if (state.source) state.source.close();
  state.source = null;
  $("log").hidden = true;  // the log was for waiting; the answer stands on its own
  $("cancel").hidden = true;
  $("submit").disabled = false;
  const task = await fetchTask().catch(() => null);  // the answer is shown without it too
  showTimes(task);
  if (data.status === "success") {
    markSteps(STEP_SLOTS.done, "done");
    setPercent(100);
    showAnswer(data, task);
  } else if (data.status === "unverified") {  // finished, but not backed by computed output
    markSteps(STEP_SLOTS.done, "unverified");
    document.querySelector('#steps li[data-step="done"]').textContent = UNVERIFIED.step;
    setPercent(100);
    showAnswer(data, task);
    const why = ((task || {}).details || {}).unverified || {};
    showWarning(why.message || UNVERIFIED.message, why.hint);
  } else if (data.status === "cancelled") {
    showNotice("タスクを中止しました。");
  } else if (!state.failed) {
    const error = data.error || {};
    showBanner(`エラー: ${error.message || "処理に失敗しました。"}`, error.hint);
  }
}

async function fetchTask() {
  const response = await fetch(withToken(`/agent/tasks/${state.taskId}`), { headers: authHeaders() });
  return response.ok ? response.json() : null;
}

// A conversion paused on CodeAct's question takes one text answer ({"answer"}).
const CODEACT_NODE = "codeact";

function convertQuestion(task) {
  const question = ((task || {}).details || {}).question;
  if ((task || {}).kind !== "convert" || !question) return null;
  const requirements = [{ id: "answer", label: "回答", type: "chat", required: true }];
  return [{ node_id: CODEACT_NODE, request: { message: `CodeAct からの質問: ${question}`, requirements } }];
}

async function showAnswersForm() {
  const task = await fetchTask();
  const question = convertQuestion(task);
  state.pausedKind = (task || {}).kind;
  const waiting = question || ((task || {}).details || {}).waiting || [];
  buildAnswersForm($("answers-fields"), waiting);
  showNotice("入力を待っています。下の欄に答えて「回答して続ける」を押してください。");
  $("answers-section").hidden = false;
  $("answers-submit").disabled = false;
  $("submit").disabled = false;
}

function showAnswer(data, task) {
  const details = (task || {}).details || {};
  const reports = details.reports || [];
  // A plan's report is shown as its page below; its Markdown source is for downloading.
  setRichText($("answer"), reports.length ? "" : data.answer || "（回答の本文はありません）");
  $("answer").hidden = reports.length > 0;
  showTables(details.tables || []);
  showReports(reports, task);
  const list = $("files-list");
  list.replaceChildren();
  if (task) {
    const offered = new Set();  // a chart copied beside its report is offered once
    for (const file of task.files) {
      const key = `${file.name}:${file.size}`;
      if (offered.has(key)) continue;
      offered.add(key);
      const link = document.createElement("a");
      link.href = withToken(file.url);
      link.textContent = `${file.name}（${sizeLabel(file.size)}）`;
      link.setAttribute("download", file.name);
      const item = document.createElement("li");
      item.append(link);
      list.append(item);
    }
  }
  $("answer-section").hidden = false;
}

function showTables(lines) {
  const list = $("tables-list");
  list.replaceChildren(...lines.map((line) => {
    const item = document.createElement("li");
    item.textContent = line;
    return item;
  }));
  list.hidden = lines.length === 0;
}

// Each report page in a frame that runs nothing (sandbox without scripts; its images are inside).
async function showReports(reports, task) {
  const box = $("reports");
  box.replaceChildren();
  for (const report of reports) {
    const file = ((task || {}).files || []).find((f) => f.path === report.html);
    if (!file) continue;
    const response = await fetch(withToken(file.url), { headers: authHeaders() }).catch(() => null);
    if (!response || !response.ok) continue;
    const title = document.createElement("h3");
    title.className = "report-title";
    title.textContent = `報告書: ${report.title}`;
    const frame = document.createElement("iframe");
    frame.className = "report";
    frame.title = `報告書: ${report.title}`;
    // No scripts may run in it; same origin only so that the page can fit its height.
    frame.setAttribute("sandbox", "allow-same-origin");
    frame.addEventListener("load", () => {
      const height = frame.contentDocument ? frame.contentDocument.documentElement.scrollHeight : 0;
      if (height) frame.style.height = `${height + 24}px`;
    });
    frame.srcdoc = await response.text();
    box.append(title, frame);
  }
}

function parse(event) {
  try {
    return JSON.parse(event.data);
  } catch {
    return {};
  }
}

function follow(taskId) {
  const url = withToken(`/agent/sse?task_id=${encodeURIComponent(taskId)}`);
  const source = new EventSource(url);
  state.source = source;
  source.addEventListener("stage", (e) => {
    const data = parse(e);
    if (data.step === "input" && data.status === "waiting") showAnswersForm();  // paused
    else onStage(data);
  });
  // The server stops: the browser reconnects by itself once it is back, and the task goes on.
  source.addEventListener("shutdown", (e) => showNotice(parse(e).message || "サーバーが停止します。"));
  source.addEventListener("log", (e) => appendLog(parse(e).msg));
  source.addEventListener("code_gen", (e) => appendLog("生成したコード:\n" + parse(e).code));
  source.addEventListener("code_exec", (e) => logCodeRun(parse(e)));
  for (const [name, describe] of Object.entries(NODE_EVENTS)) {
    source.addEventListener(name, (e) => appendLog(describe(parse(e))));
  }
  source.addEventListener("done", (e) => finish(parse(e)));
  source.addEventListener("error", (e) => {
    if (e instanceof MessageEvent && e.data) {
      onError(parse(e));  // the task's own error event (seed 003 §3)
    } else if (source.readyState === EventSource.CLOSED && state.source === source) {
      state.source = null;
      showBanner("進捗を受信できなくなりました。", "ページを再読み込みするか、API キーを確認してください。");
      $("submit").disabled = false;
    }  // otherwise the browser reconnects by itself and sends Last-Event-ID
  });
}

function requestBody() {
  const kind = $("kind").value;
  const request = $("request").value.trim();
  if (kind === "plan") {
    const body = { kind, plan: $("plan").value };
    // Without answers the server runs a bundled example on its sample data: only when asked.
    if (!usesSample()) body.answers = collectAnswers($("plan-inputs")).body.answers;
    return body;
  }
  if (kind === "design") {
    const templates = $("templates").value.split(",").map((t) => t.trim()).filter(Boolean);
    return { kind, instruction: request, apply_mode: $("apply-mode").value, templates };
  }
  if (kind === "analysis") {
    const files = $("files").value.split("\n").map((f) => f.trim()).filter(Boolean);
    return { kind, request, files };
  }
  const source = $("source").value.trim();
  return source ? { kind, request, source } : { kind, request };
}

// JSON, or multipart with the JSON in "request" and the chosen files in "files".
function encode(body, files) {
  if (!files.length) return { headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const form = new FormData();
  form.append("request", JSON.stringify(body));
  for (const file of files) form.append("files", file, file.name);
  return { headers: {}, body: form };
}

function reset() {
  if (state.source) state.source.close();
  Object.assign(state, { source: null, taskId: null, token: null, slot: -1, percent: 0, failed: false });
  $("error-banner").hidden = true;
  $("warning-banner").hidden = true;
  $("notice").hidden = true;
  $("answers-section").hidden = true;
  $("answer-section").hidden = true;
  $("progress-section").hidden = true;
  $("task-times").hidden = true;
  $("log").textContent = "";
  document.querySelectorAll("#steps li").forEach((li) => li.classList.remove(...STEP_CLASSES));
  labelSteps(state.kind);
  $("progress").value = 0;
  $("progress-label").textContent = "0%";
}

// POST a request (JSON or multipart); on success follow the task it started or continued.
async function post(url, payload, enable) {
  let response;
  try {
    response = await fetch(url, { method: "POST", headers: { ...payload.headers, ...authHeaders() }, body: payload.body });
  } catch (error) {
    showBanner("サーバーに接続できません。", "`keiri-agent serve` が動いているか確認してください。");
    enable();
    return false;
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    showBanner(body.message || `送信に失敗しました（HTTP ${response.status}）。`, body.hint);
    enable();
    return false;
  }
  $("log").hidden = false;  // shown only while waiting
  if (state.source && state.taskId === body.task_id) return true;  // a paused task goes on
  state.taskId = body.task_id;
  state.token = body.token || null;
  state.kind = body.kind || state.kind;
  labelSteps(state.kind);
  showTimes(body);
  $("progress-section").hidden = false;
  $("cancel").hidden = false;
  follow(body.task_id);
  return true;
}

async function submit(event) {
  event.preventDefault();
  reset();
  $("submit").disabled = true;
  const kind = $("kind").value;
  let files = [];
  if (kind === "plan") files = usesSample() ? [] : collectAnswers($("plan-inputs")).files;
  else if (kind !== "design") files = Array.from($("upload").files);
  state.names = kind === "plan" ? (chosenPlan() || {}).node_names || {} : {};
  await post("/agent/run", encode(requestBody(), files), () => { $("submit").disabled = false; });
}

async function submitAnswers(event) {
  event.preventDefault();
  const collected = collectAnswers($("answers-fields"));
  const files = collected.files;
  const body = state.pausedKind === "convert"
    ? { answer: (collected.body.answers[CODEACT_NODE] || {}).answer || "" }
    : collected.body;
  const paused = state.taskId;
  $("answers-submit").disabled = true;
  $("submit").disabled = true;
  $("error-banner").hidden = true;
  $("notice").hidden = true;
  state.failed = false;
  const enable = () => { $("answers-submit").disabled = false; $("submit").disabled = false; };
  if (await post(withToken(`/agent/tasks/${paused}/answers`), encode(body, files), enable)) {
    $("answers-section").hidden = true;
  }
}

async function cancel() {
  if (!state.taskId) return;
  const response = await fetch(withToken(`/agent/tasks/${state.taskId}/cancel`), {
    method: "POST",
    headers: authHeaders(),
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    showBanner(body.message || "中止できませんでした。", body.hint);
  }
}

function showKindFields() {
  const kind = $("kind").value;
  document.querySelectorAll("[data-kind]").forEach((el) => { el.hidden = !el.dataset.kind.split(" ").includes(kind); });
  state.kind = kind;
  labelSteps(kind);
  const text = REQUEST_TEXT[kind];
  if (text) {
    $("request-label").textContent = text.label;
    $("request").placeholder = text.example;
  }
  if (kind === "plan") {
    if (!state.plans.length) loadPlans();
    else showPlanFields();
  }
}

function chosenPlan() {
  return state.plans.find((p) => p.plan === $("plan").value);
}

function usesSample() {
  const plan = chosenPlan();
  return Boolean(plan && plan.sample_data && $("use-sample").checked);
}

// The chosen plan: its description, the sample-data choice, and its inputs as a form.
function showPlanFields() {
  const plan = chosenPlan() || {};
  setRichText($("plan-description"), plan.error ? `この Plan は使えません: ${plan.error}` : plan.description || "");
  $("sample-choice").hidden = !plan.sample_data;
  const sample = usesSample();
  $("plan-inputs").hidden = sample;
  buildAnswersForm($("plan-inputs"), sample ? [] : plan.inputs || []);
  $("submit").disabled = Boolean(plan.error);
}

async function loadPlans() {
  const response = await fetch("/agent/plans", { headers: authHeaders() }).catch(() => null);
  const body = response ? await response.json().catch(() => ({})) : {};
  if (!response || !response.ok) {
    showBanner(body.message || "Plan の一覧を読み込めませんでした。", body.hint || "API キーを確かめて、もう一度選んでください。");
    return;
  }
  state.plans = body.plans || [];
  $("plan").replaceChildren(...state.plans.map((plan) => {
    const option = document.createElement("option");
    option.value = plan.plan;
    option.textContent = plan.sample_data ? `サンプル: ${plan.title}` : plan.title;
    return option;
  }));
  showPlanFields();
}

document.addEventListener("DOMContentLoaded", () => {
  $("request-form").addEventListener("submit", submit);
  $("answers-form").addEventListener("submit", submitAnswers);
  $("cancel").addEventListener("click", cancel);
  $("kind").addEventListener("change", showKindFields);
  $("plan").addEventListener("change", showPlanFields);
  $("use-sample").addEventListener("change", showPlanFields);
  showKindFields();
});
