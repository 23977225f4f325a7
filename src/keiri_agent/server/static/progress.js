// The progress page (seed 003 §3): send a request, follow its SSE events, show the answer.
//
// Front-end policy of the seed: the log console is shown only while the task runs and is never
// part of the final answer; the steps are interpret → fetch → convert/viz → finish (+ done);
// an `error` event shows a red banner and ends the run. Plain JS, no build step.
//
// Authentication: the API key typed into the page is kept in memory and sent as
// `Authorization: Bearer` with fetch(). EventSource and download links cannot send headers, so
// they carry the per-task `token` that POST /agent/run returns (it opens only that task).
"use strict";

const STEP_SLOTS = { interpret: 0, fetch: 1, convert: 2, viz: 2, finish: 3, done: 4 };
const STEP_COUNT = 5;
const NODE_EVENTS = {
  plan_start: (d) => `Plan ${d.plan_id} を開始しました`,
  node_start: (d) => `▶ ${d.node_id} 開始（${d.block || ""}）`,
  node_complete: (d) => `✓ ${d.node_id} 完了（${Math.round(d.duration_ms || 0)} ms）`,
  node_skipped: (d) => `- ${d.node_id} スキップ（${d.reason}）`,
  node_error: (d) => `✗ ${d.node_id} エラー: ${(d.error || {}).message || ""}`,
  node_waiting: (d) => `⏸ ${d.node_id} 入力待ち`,
  plan_complete: (d) => `Plan 終了（${d.status}）`,
};

const $ = (id) => document.getElementById(id);
const state = { source: null, taskId: null, token: null, slot: -1, percent: 0, failed: false };

function authHeaders() {
  const key = $("api-key").value.trim();
  return key ? { Authorization: `Bearer ${key}` } : {};
}

function withToken(url) {
  if (!state.token) return url;
  return url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(state.token);
}

function showBanner(message, hint) {
  const banner = $("error-banner");
  banner.textContent = hint ? `${message}\nヒント: ${hint}` : message;
  banner.hidden = false;
}

function showNotice(message) {
  $("notice").textContent = message;
  $("notice").hidden = false;
}

function appendLog(line) {
  const log = $("log");
  log.textContent += line + "\n";
  log.scrollTop = log.scrollHeight;
}

function setPercent(percent) {
  state.percent = Math.max(state.percent, Math.min(100, Math.round(percent)));
  $("progress").value = state.percent;
  $("progress-label").textContent = `${state.percent}%`;
}

function markSteps(slot, status) {
  state.slot = Math.max(state.slot, slot);
  document.querySelectorAll("#steps li").forEach((li, index) => {
    li.classList.remove("active", "done", "failed");
    if (index < state.slot || (index === state.slot && status === "done")) li.classList.add("done");
    else if (index === state.slot) li.classList.add(status === "failed" ? "failed" : "active");
  });
}

function onStage(data) {
  const slot = STEP_SLOTS[data.step];
  if (slot === undefined) {  // an agent's own step names (reason, code_exec, ...): log only
    appendLog(`[${data.step}] ${data.status}`);
    return;
  }
  markSteps(slot, data.status);
  const fallback = ((data.status === "done" ? slot + 1 : slot) / STEP_COUNT) * 100;
  setPercent(typeof data.progress === "number" ? data.progress * (STEP_COUNT - 1) / STEP_COUNT * 100 : fallback);
}

function onError(data) {
  state.failed = true;
  showBanner(`エラー${data.step ? `（${data.step}）` : ""}: ${data.message}`, (data.error || {}).hint);
  if (state.slot >= 0) markSteps(state.slot, "failed");
}

function finish(data) {
  if (state.source) state.source.close();
  state.source = null;
  $("log").hidden = true;  // the log was for waiting; the answer stands on its own
  $("cancel").hidden = true;
  $("submit").disabled = false;
  if (data.status === "success") {
    markSteps(STEP_SLOTS.done, "done");
    setPercent(100);
    showAnswer(data);
  } else if (data.status === "cancelled") {
    showNotice("タスクを中止しました。");
  } else if (!state.failed) {
    const error = data.error || {};
    showBanner(`エラー: ${error.message || "処理に失敗しました。"}`, error.hint);
  }
}

async function showAnswer(data) {
  $("answer").textContent = data.answer || "（回答の本文はありません）";
  const list = $("files-list");
  list.replaceChildren();
  const response = await fetch(withToken(`/agent/tasks/${state.taskId}`), { headers: authHeaders() });
  if (response.ok) {
    for (const file of (await response.json()).files) {
      const link = document.createElement("a");
      link.href = withToken(file.url);
      link.textContent = `${file.name}（${file.size ?? "?"} バイト）`;
      link.setAttribute("download", file.name);
      const item = document.createElement("li");
      item.append(link);
      list.append(item);
    }
  }
  $("answer-section").hidden = false;
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
  source.addEventListener("stage", (e) => onStage(parse(e)));
  source.addEventListener("log", (e) => appendLog(parse(e).msg));
  source.addEventListener("code_gen", (e) => appendLog("生成したコード:\n" + parse(e).code));
  source.addEventListener("code_exec", (e) => {
    const d = parse(e);
    appendLog(`実行結果: ${d.success === false ? "失敗" : "成功"}\n${d.stdout || ""}${d.stderr || ""}`.trimEnd());
  });
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
  if (kind === "plan") return { kind, plan: $("plan").value.trim(), request };
  if (kind === "analysis") {
    const files = $("files").value.split("\n").map((f) => f.trim()).filter(Boolean);
    return { kind, request, files };
  }
  const source = $("source").value.trim();
  return source ? { kind, request, source } : { kind, request };
}

function reset() {
  if (state.source) state.source.close();
  Object.assign(state, { source: null, taskId: null, token: null, slot: -1, percent: 0, failed: false });
  $("error-banner").hidden = true;
  $("notice").hidden = true;
  $("answer-section").hidden = true;
  $("progress-section").hidden = true;
  $("log").textContent = "";
  document.querySelectorAll("#steps li").forEach((li) => li.classList.remove("active", "done", "failed"));
  $("progress").value = 0;
  $("progress-label").textContent = "0%";
}

async function submit(event) {
  event.preventDefault();
  reset();
  $("submit").disabled = true;
  let response;
  try {
    response = await fetch("/agent/run", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...authHeaders() },
      body: JSON.stringify(requestBody()),
    });
  } catch (error) {
    showBanner("サーバーに接続できません。", "keiri-agent serve が動いているか確認してください。");
    $("submit").disabled = false;
    return;
  }
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    showBanner(body.message || `送信に失敗しました（HTTP ${response.status}）。`, body.hint);
    $("submit").disabled = false;
    return;
  }
  state.taskId = body.task_id;
  state.token = body.token || null;
  $("progress-section").hidden = false;
  $("log").hidden = false;  // shown only while waiting
  $("cancel").hidden = false;
  follow(body.task_id);
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
  document.querySelectorAll("[data-kind]").forEach((el) => { el.hidden = el.dataset.kind !== kind; });
}

document.addEventListener("DOMContentLoaded", () => {
  $("request-form").addEventListener("submit", submit);
  $("cancel").addEventListener("click", cancel);
  $("kind").addEventListener("change", showKindFields);
  showKindFields();
});
