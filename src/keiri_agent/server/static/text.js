// Text shown to the user: stage labels per task kind, request boxes, statuses, sizes, and
// messages with `code` spans.
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
  design: { interpret: "設計", fetch: "候補の検索", convert: "配線", finish: "検証と保存", done: "完了" },
};
// The request box of each kind: its label and example (a plan run has no request box).
const REQUEST_TEXT = {
  convert: { label: "依頼", example: "例: 売上データを月別に集計して Parquet に変換してください" },
  analysis: { label: "質問", example: "例: 取引先別の売上を比べて、多い順に 5 社を教えてください" },
  design: { label: "指示", example: "例: 請求書と入金明細を照合して、差異を Excel に出力してください" },
};
// How a plan run ended (the plan_complete event's status).
const PLAN_STATUS = { success: "成功", failed: "失敗", waiting_input: "入力待ち", cancelled: "中止", partial: "一部未完了" };
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

// A file size as people read it: 950 バイト, 25.9 KB, 1.2 MB.
function sizeLabel(bytes) {
  if (typeof bytes !== "number") return "大きさ不明";
  if (bytes < 1024) return `${bytes} バイト`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
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
