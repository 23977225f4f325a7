// Text shown to the user: stage labels per task kind, and messages with `code` spans.
//
// Internal step names (interpret, fetch, ...) never reach the page: each task kind has its own
// Japanese labels for the five slots of the stage bar. Messages from the server may contain
// Markdown code spans (`keiri-agent doctor`); they are shown as <code> elements, never as
// literal backticks, and never through innerHTML.
"use strict";

const STAGE_LABELS = {
  convert: { interpret: "解釈", fetch: "取得", convert: "変換・可視化", viz: "変換・可視化", finish: "仕上げ", done: "完了" },
  plan: { interpret: "検証", fetch: "入力・読み込み", convert: "処理", finish: "結果の保存", done: "完了" },
  analysis: { interpret: "準備", fetch: "データ読み込み", convert: "分析", finish: "レポート", done: "完了" },
};
const OTHER_STEPS = { queued: "順番待ち", reason: "考察", code_gen: "コード生成", code_exec: "コード実行", report: "レポート作成" };
// A task that ended `unverified`: the last step's label, and the band's text when the task's
// details.unverified (the server's message and hint) cannot be read.
const UNVERIFIED = { step: "未検証", message: "未検証の結果です。回答は計算結果で裏付けられていません。" };
const STATUS_LABELS = { start: "開始", done: "完了", progress: "進行中", failed: "失敗", waiting: "待機中" };

function stageLabel(kind, step) {
  const labels = STAGE_LABELS[kind] || STAGE_LABELS.convert;
  return labels[step] || OTHER_STEPS[step] || "処理";
}

function statusLabel(status) {
  return STATUS_LABELS[status] || status || "";
}

// Fill `element` with `text`, turning `code` spans into <code> elements.
function setRichText(element, text) {
  element.replaceChildren();
  String(text ?? "").split(/(`[^`\n]+`)/).forEach((part) => {
    if (part.length > 2 && part.startsWith("`") && part.endsWith("`")) {
      const code = document.createElement("code");
      code.textContent = part.slice(1, -1);
      element.append(code);
    } else if (part) {
      element.append(document.createTextNode(part));
    }
  });
}

// Plain text without Markdown code marks (for the log console, which is plain text).
function plainText(text) {
  return String(text ?? "").replace(/`([^`\n]+)`/g, "$1");
}
