// The answers form of a paused plan run, built from its ui.interactive_input requests.
//
// A plan task that waits for a person pauses as `waiting_input`; its details.waiting lists each
// waiting node with its request (mode, message, requirements). Each requirement becomes a form
// control by its type; file fields upload the chosen files with the answers (their value is the
// file name, which the server resolves to the upload). `collectAnswers` returns the JSON body and
// the files for POST /agent/tasks/{id}/answers.
"use strict";

function fieldControl(nodeId, req) {
  const name = `${nodeId}::${req.id}`;
  let control;
  if (req.type === "file" || req.type === "files") {
    control = document.createElement("input");
    control.type = "file";
    control.multiple = req.type === "files";
    if (req.accept) control.accept = req.accept;
  } else if (req.type === "boolean") {
    control = document.createElement("input");
    control.type = "checkbox";
    control.checked = req.default === true;
  } else if (req.type === "select" || req.type === "enum") {
    control = document.createElement("select");
    for (const option of req.options || []) {
      const value = typeof option === "object" && option !== null ? option.value : option;
      const item = document.createElement("option");
      item.value = String(value);
      item.textContent = typeof option === "object" && option !== null ? String(option.label ?? value) : String(option);
      control.append(item);
    }
    if (req.default != null) control.value = String(req.default);
  } else if (req.type === "chat" || req.type === "table") {
    control = document.createElement("textarea");
    control.rows = 3;
    if (req.type === "table") control.placeholder = '[{"列": "値"}]（JSON）';
  } else {
    control = document.createElement("input");
    control.type = req.type === "number" ? "number" : "text";
    if (req.type === "folder") control.placeholder = "作業フォルダ内のフォルダのパス";
  }
  if (control.type !== "file" && control.type !== "checkbox" && req.default != null && control.tagName !== "SELECT") {
    control.value = typeof req.default === "object" ? JSON.stringify(req.default) : String(req.default);
  }
  control.name = name;
  control.dataset.node = nodeId;
  control.dataset.field = req.id;
  control.dataset.type = req.type;
  return control;
}

function labelled(text, control, help) {
  const label = document.createElement("label");
  const caption = document.createElement("span");
  setRichText(caption, text);
  label.append(caption, control);
  if (help) {
    const note = document.createElement("small");
    setRichText(note, help);
    label.append(note);
  }
  return label;
}

function buildAnswersForm(container, waiting) {
  container.replaceChildren();
  for (const { node_id: nodeId, request } of waiting) {
    const group = document.createElement("fieldset");
    group.dataset.node = nodeId;
    const legend = document.createElement("legend");
    setRichText(legend, request.message || "次の項目を入力してください");
    group.append(legend);
    for (const req of request.requirements || []) {
      const mark = req.required ? "（必須）" : "";
      group.append(labelled(`${req.label}${mark}`, fieldControl(nodeId, req), req.description || req.hint));
    }
    if (request.mode === "confirm" || request.mode === "mixed") {
      const approve = fieldControl(nodeId, { id: "approved", type: "boolean", default: true });
      group.append(labelled("承認する", approve));
    }
    if (request.mode === "inquire" || request.mode === "confirm" || request.mode === "mixed") {
      const response = fieldControl(nodeId, { id: "response", type: "chat" });
      group.append(labelled(request.mode === "inquire" ? "回答（必須）" : "コメント（任意）", response));
    }
    container.append(group);
  }
}

function controlValue(control, files) {
  const type = control.dataset.type;
  if (type === "file" || type === "files") {
    const names = [];
    for (const file of control.files) {
      files.push(file);
      names.push(file.name);
    }
    if (!names.length) return undefined;
    return type === "file" ? names[0] : names;
  }
  if (type === "boolean") return control.checked;
  const text = control.value.trim();
  if (!text) return undefined;
  if (type === "number") return Number(text);
  if (type === "table") {
    try {
      return JSON.parse(text);
    } catch {
      return text;  // the server explains what is wrong with it
    }
  }
  return text;
}

// { answers: {node: {field: value}} } and the files to upload with them.
function collectAnswers(container) {
  const answers = {};
  const files = [];
  container.querySelectorAll("[data-field]").forEach((control) => {
    const value = controlValue(control, files);
    const node = (answers[control.dataset.node] ||= {});
    if (value !== undefined) node[control.dataset.field] = value;
  });
  return { body: { answers }, files };
}
