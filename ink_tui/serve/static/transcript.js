// ink serve: one transcript drawn from events (user lines, notices, the streaming
// answer and its thinking, tool rows), into a container. The page's main transcript is
// one; each sub-agent's, under its task row, is another, drawn the same way.
// Server text only ever goes in through textContent or the escaping markdown renderer.
"use strict";

(() => {
  const md = window.InkMarkdown;
  const MODE_LABELS = { steer: "steer", follow_up: "follow-up", shell: "shell" };
  const MAIN_ARGUMENT = { read: "path", write: "path", edit: "path", ls: "path", bash: "command", grep: "pattern", find: "pattern" };
  const TOOL_MARKS = { queued: "·", running: "◌", waiting: "?", ok: "✓", error: "✗" };
  const TOOL_WORDS = { queued: "queued", running: "running", waiting: "asks you" };

  function seconds(ms) {
    return `${(ms / 1000).toFixed(1)}s`;
  }

  function callLabel(name, args) {
    const key = MAIN_ARGUMENT[name];
    const a = args && typeof args === "object" ? args : {};
    if (key && typeof a[key] === "string") {
      let main = a[key].replace(/\s+/g, " ").trim();
      if (name === "grep" && typeof a.path === "string") main += ` in ${a.path}`;
      return `${name} ${main}`;
    }
    if (name === "ls") return "ls .";
    if (name === "task" && typeof a.description === "string") return `task ${a.description}`;
    return name || "tool";
  }

  // "✓ read README.md (0.3s): 3 lines" -> "3 lines" (mark, label and time are drawn apart).
  function summaryDetail(summary) {
    const colon = summary.indexOf(": ");
    return colon >= 0 ? summary.slice(colon + 2) : "";
  }

  function setTool(tool, state) {
    // A call's time counts from when it runs, not from a question's wait.
    if (state === "running" && tool.state !== "running") tool.startedAt = Date.now();
    // A settled call stays settled: a late or replayed start must not make it run again.
    if ((tool.state === "ok" || tool.state === "error") && state !== "ok" && state !== "error") return;
    if (state === "waiting") tool.durationEl.textContent = "";
    tool.state = state;
    tool.el.dataset.state = state;
    tool.mark.textContent = TOOL_MARKS[state];
    tool.word.textContent = TOOL_WORDS[state] || "";
    if (typeof tool.duration === "number") tool.durationEl.textContent = `${tool.duration.toFixed(tool.duration < 10 ? 2 : 1)}s`;
    else if (state === "queued") tool.durationEl.textContent = "";
    if (tool.onState) tool.onState(state);
  }

  // A view over `container`. `hooks.adding(draw)` runs each change (the page follows the
  // output with it); `hooks.onToolRow(tool, name, args)`, when given, may add to a row
  // as it is made (the task rows).
  function create(container, hooks) {
    const adding = hooks.adding;
    const v = { container, assistant: null, thinking: null, tools: new Map() };

    v.reset = () => {
      container.replaceChildren();
      v.assistant = null;
      v.thinking = null;
      v.tools.clear();
    };

    v.addUser = (text, kind) => {
      adding(() => {
        const el = document.createElement("div");
        el.className = `msg-user kind-${kind}`;
        if (kind !== "prompt") {
          const badge = document.createElement("span");
          badge.className = "kind";
          badge.textContent = kind === "shell" ? "!" : MODE_LABELS[kind] || kind;
          el.append(badge);
        }
        el.append(document.createTextNode(text));
        container.append(el);
      });
    };

    v.addNotice = (text, level) => {
      adding(() => {
        const el = document.createElement("div");
        el.className = `notice level-${level}`;
        el.textContent = text;
        container.append(el);
      });
    };

    v.appendAnswer = (text) => {
      if (!v.assistant) {
        const el = document.createElement("div");
        el.className = "msg-assistant streaming";
        adding(() => container.append(el));
        v.assistant = { el, text: "", frame: 0 };
      }
      v.assistant.text += text;
      drawAnswerSoon(v.assistant);
    };

    // One markdown pass per frame, however many deltas arrived in it.
    function drawAnswerSoon(answer) {
      if (answer.frame) return;
      answer.frame = requestAnimationFrame(() => {
        answer.frame = 0;
        adding(() => { answer.el.innerHTML = md.render(answer.text); });
      });
    }

    v.appendThinking = (text) => {
      if (!v.thinking) {
        const el = document.createElement("details");
        el.className = "thinking";
        el.open = true;
        const summary = document.createElement("summary");
        summary.textContent = "thinking";
        const body = document.createElement("div");
        body.className = "body";
        el.append(summary, body);
        adding(() => container.append(el));
        v.thinking = { el, body, text: "" };
      }
      v.thinking.text += text;
      adding(() => { v.thinking.body.textContent = v.thinking.text; });
    };

    v.endAnswer = () => {
      if (v.assistant) {
        const answer = v.assistant;
        if (answer.frame) {
          cancelAnimationFrame(answer.frame);
          answer.frame = 0;
        }
        answer.el.innerHTML = md.render(answer.text);
        answer.el.classList.remove("streaming");
      }
      if (v.thinking) v.thinking.el.open = false;
      v.assistant = null;
      v.thinking = null;
    };

    // The finished message is the truth: it also holds text streamed before this page
    // connected (after a reload mid-answer).
    v.finishMessage = (message) => {
      if (message.thinking && !v.thinking) v.appendThinking(message.thinking);
      else if (v.thinking && message.thinking) {
        v.thinking.text = message.thinking;
        v.thinking.body.textContent = message.thinking;
      }
      if (message.text) {
        if (!v.assistant) v.appendAnswer("");
        v.assistant.text = message.text;
      }
      v.endAnswer();
      for (const call of message.tool_calls || []) v.toolRow(call.id, call.name, call.arguments);
    };

    v.toolRow = (callId, name, args) => {
      let tool = v.tools.get(callId);
      if (tool) {
        if (name && args !== undefined) tool.name.textContent = callLabel(name, args);
        return tool;
      }
      const el = document.createElement("div");
      el.className = "tool";
      el.dataset.callId = callId;
      const row = document.createElement("div");
      row.className = "tool-row";
      row.setAttribute("role", "button");
      row.setAttribute("aria-expanded", "false");
      row.tabIndex = 0;
      const caret = document.createElement("span");
      caret.className = "caret";
      caret.textContent = "▸";
      const mark = document.createElement("span");
      mark.className = "mark";
      const label = document.createElement("span");
      label.className = "label";
      const nameEl = document.createElement("span");
      nameEl.className = "name";
      nameEl.textContent = callLabel(name, args);
      const detail = document.createElement("span");
      detail.className = "detail";
      const word = document.createElement("span");
      word.className = "state-word";
      const durationEl = document.createElement("span");
      durationEl.className = "duration";
      const body = document.createElement("pre");
      body.className = "tool-body";
      label.append(nameEl, " ", detail);
      row.append(caret, mark, label, word, durationEl);
      el.append(row, body);
      const toggle = () => {
        const open = el.classList.toggle("open");
        row.setAttribute("aria-expanded", String(open));
      };
      row.addEventListener("click", toggle);
      row.addEventListener("keydown", (ev) => {
        // Keys on a control inside the row (a task row's buttons) are that control's.
        if (ev.target !== row) return;
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); }
      });
      tool = {
        el, row, mark, name: nameEl, detail, word, durationEl, body,
        state: "", startedAt: null, duration: null, onState: null,
      };
      v.tools.set(callId, tool);
      if (hooks.onToolRow) hooks.onToolRow(tool, name, args, v);
      adding(() => container.append(el));
      setTool(tool, "queued");
      return tool;
    };

    // A tool's result, from the event that ended it or from the history.
    v.toolResult = (tool, content, isError) => {
      tool.body.textContent = content || "(no output)";
      if (tool.onResult) tool.onResult(content, isError);
    };

    v.renderHistory = (messages) => {
      for (const m of messages) {
        if (m.role === "user") {
          v.addUser(typeof m.content === "string" ? m.content : JSON.stringify(m.content), m.kind || "prompt");
        } else if (m.role === "assistant") {
          v.finishMessage(m);
        } else if (m.role === "tool") {
          const tool = v.toolRow(m.call_id, m.tool_name);
          const content = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
          v.toolResult(tool, content, !!m.is_error);
          const lines = content ? content.split("\n").length : 0;
          if (!tool.ownsDetail) tool.detail.textContent = m.is_error ? content.split("\n")[0].slice(0, 120) : `${lines} line${lines === 1 ? "" : "s"}`;
          setTool(tool, m.is_error ? "error" : "ok");
        }
      }
    };

    // The drawing part of an event (the page's state line and phases are its own).
    v.applyEvent = (e) => {
      switch (e.type) {
        case "user_message":
          v.endAnswer();
          v.addUser(e.text || "", e.kind || "prompt");
          break;
        case "turn_start":
          v.endAnswer();
          break;
        case "message_update":
          if (e.delta && e.delta.type === "thinking") v.appendThinking(e.delta.text || "");
          else if (e.delta) v.appendAnswer(e.delta.text || "");
          break;
        case "message_end":
          v.finishMessage(e.message || {});
          break;
        case "tool_execution_start":
          setTool(v.toolRow(e.call_id, e.tool_name, e.arguments), e.concurrent ? "queued" : "running");
          break;
        case "tool_execution_running":
          setTool(v.toolRow(e.call_id), "running");
          break;
        case "tool_execution_settled": {
          const tool = v.toolRow(e.call_id);
          tool.duration = e.duration_s;
          setTool(tool, e.is_error ? "error" : "ok");
          break;
        }
        case "tool_execution_end": {
          const tool = v.toolRow(e.call_id, e.tool_name);
          tool.duration = e.duration_s;
          if (e.summary && !tool.ownsDetail) tool.detail.textContent = summaryDetail(e.summary);
          v.toolResult(tool, e.content, !!e.is_error);
          setTool(tool, e.is_error ? "error" : "ok");
          break;
        }
        case "auto_retry_start":
          v.addNotice(`Retrying (attempt ${e.attempt} of ${e.max_attempts}) in ${e.delay_s}s: ${e.reason}`, "warning");
          break;
        case "error":
          v.endAnswer();
          v.addNotice(e.message || "The run failed.", "error");
          break;
        case "notice":
          v.addNotice(e.text || "", e.level || "info");
          break;
        default:
          break;
      }
    };

    // The running tools' times tick.
    v.tick = (now) => {
      for (const tool of v.tools.values()) {
        if (tool.state === "running" && tool.startedAt) tool.durationEl.textContent = seconds(now - tool.startedAt);
      }
    };

    return v;
  }

  window.InkTranscript = { create, setTool, callLabel, summaryDetail, seconds, MODE_LABELS };
})();
