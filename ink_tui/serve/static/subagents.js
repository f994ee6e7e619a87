// ink serve: the task rows. A `task` call's row names its sub-agent's task, says what it
// does now (its tool, thinking or writing; elapsed time; tokens) and how it ended, and
// unfolds to the sub-agent's own transcript, drawn like the main one (transcript.js).
// A sub-agent's events are drawn there and nowhere else (the main transcript is the
// top-level agent's alone). While it runs, the row's Stop posts `.../agents/{id}/abort`
// and Steer opens a box under the row that posts `.../agents/{id}/messages` as a steer.
// Server text goes in through textContent (or the transcript's markdown renderer) only.
"use strict";

(() => {
  const T = window.InkTranscript;

  // How a sub-agent ended (subagent_end's stop_reason), in the row's words.
  const END_WORDS = {
    completed: "done", stopped: "stopped", aborted: "interrupted",
    max_iterations: "hit its turn limit", failed: "failed",
  };

  function tokenCount(n) {
    return n >= 10000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
  }

  function usageTokens(usage) {
    return usage ? (usage.input_tokens || 0) + (usage.output_tokens || 0) : 0;
  }

  // hooks: adding(draw), api(method, path, body), sessionPath(id, rest),
  // sessionId(). Errors show on the row itself (not in the page's banner): they are its own.
  function create(hooks) {
    const agents = new Map(); // agent_id -> agent
    // A resumed session's earlier sub-agents, drawn from the file's record. Not in
    // `agents`: ids count from 1 again in each process, so a new one may reuse an id.
    const recorded = [];

    // A `task` row as it is made (in the main view or in a sub-agent's): the live line,
    // the controls, the steer box and the place for the sub-agent's transcript.
    function onToolRow(tool, name) {
      if (name !== "task") return;
      tool.el.classList.add("task");
      tool.ownsDetail = true;
      const head = document.createElement("div");
      head.className = "task-head";
      tool.row.replaceWith(head);
      const controls = document.createElement("span");
      controls.className = "task-controls";
      controls.hidden = true;
      const stop = button("task-stop danger", "Stop", "Stop this sub-agent alone (the rest goes on)");
      const steer = button("task-steer", "Steer", "Send this sub-agent a message for its next model call");
      controls.append(steer, stop);
      head.append(tool.row, controls);
      const box = steerBox();
      const error = document.createElement("div");
      error.className = "task-error";
      error.setAttribute("role", "alert");
      error.hidden = true;
      const transcript = document.createElement("div");
      transcript.className = "task-transcript";
      const empty = document.createElement("div");
      empty.className = "task-empty";
      empty.textContent = "Nothing from this sub-agent yet.";
      transcript.append(empty);
      // The result (what the parent got) stays below the transcript, as the body.
      tool.body.classList.add("task-result");
      head.after(box.el, error);
      tool.body.before(transcript);
      tool.task = { head, controls, stop, steer, box, error, transcript, empty, agent: null, stopping: false };
      tool.onState = () => drawRow(tool);
      stop.addEventListener("click", () => stopAgent(tool));
      steer.addEventListener("click", () => toggleSteer(tool));
      box.send.addEventListener("click", () => sendSteer(tool));
      box.cancel.addEventListener("click", () => closeSteer(tool));
      box.area.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
          ev.preventDefault();
          sendSteer(tool);
        } else if (ev.key === "Escape") {
          ev.preventDefault();
          closeSteer(tool); // what was typed stays in the box for next time
        }
      });
    }

    function button(cls, text, title) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = `button small ${cls}`;
      b.textContent = text;
      b.title = title;
      return b;
    }

    function steerBox() {
      const el = document.createElement("div");
      el.className = "task-steer-box";
      el.hidden = true;
      const label = document.createElement("div");
      label.className = "task-steer-label";
      const area = document.createElement("textarea");
      area.className = "task-steer-input";
      area.rows = 2;
      area.spellcheck = false;
      area.maxLength = 100000;
      const send = button("primary task-steer-send", "Send steer", "Send (Enter); Shift+Enter: a new line");
      const cancel = button("task-steer-cancel", "Close", "Close the box (Escape); the text stays");
      const row = document.createElement("div");
      row.className = "task-steer-buttons";
      row.append(send, cancel);
      el.append(label, area, row);
      return { el, label, area, send, cancel };
    }

    // The agent a row's sub-agent is, made on its first sign (its start, or any event
    // of it when the page came in later).
    function agentOf(e, main) {
      let agent = agents.get(e.agent_id);
      if (agent) return agent;
      const parent = (e.parent_agent_id && agents.get(e.parent_agent_id)) || null;
      const view = parent ? parent.view : main;
      const description = typeof e.description === "string" ? e.description : "";
      const tool = view.toolRow(e.parent_call_id || `agent:${e.agent_id}`, "task", description ? { description } : undefined);
      if (!tool.task) onToolRow(tool, "task");
      agent = {
        id: e.agent_id, tool, description, running: true, now: "starting",
        tools: new Map(), tokens: 0, turns: 0, queued: 0, asking: false,
        startedAt: Date.now(), duration: null, stopReason: null, error: null,
      };
      tool.task.agent = agent;
      tool.el.dataset.agentId = e.agent_id;
      agent.view = T.create(tool.task.transcript, { adding: hooks.adding, onToolRow });
      agents.set(e.agent_id, agent);
      return agent;
    }

    // One event of a sub-agent: its transcript and its row's live line.
    function apply(e, main) {
      const agent = agentOf(e, main);
      const task = agent.tool.task;
      if (task.empty.isConnected && e.type !== "subagent_start" && e.type !== "queue_update") task.empty.remove();
      agent.view.applyEvent(e);
      switch (e.type) {
        case "subagent_start":
          if (e.description) {
            agent.description = e.description;
            agent.tool.name.textContent = T.callLabel("task", { description: e.description });
          }
          agent.running = true;
          // The row's clock is the sub-agent's (the call's own starts a moment before).
          if (agent.tool.state !== "ok" && agent.tool.state !== "error") T.setTool(agent.tool, "running");
          agent.tool.startedAt = agent.startedAt;
          break;
        case "turn_start":
          agent.now = "waiting for the model";
          break;
        case "message_update":
          if (e.delta) agent.now = e.delta.type === "thinking" ? "thinking" : "writing";
          break;
        case "message_end":
          agent.tokens += usageTokens(e.message && e.message.usage);
          agent.turns += 1;
          agent.now = "waiting for the model";
          break;
        case "tool_execution_start":
        case "tool_execution_running": {
          const tool = agent.view.tools.get(e.call_id);
          if (tool) agent.tools.set(e.call_id, tool.name.textContent);
          break;
        }
        case "tool_execution_settled":
        case "tool_execution_end":
          agent.tools.delete(e.call_id);
          break;
        case "queue_update":
          agent.queued = (e.entries || []).length;
          break;
        case "subagent_end":
          ended(agent, e);
          break;
        default:
          break;
      }
      drawRow(agent.tool);
    }

    function ended(agent, e) {
      agent.view.endAnswer();
      agent.running = false;
      agent.tools.clear();
      agent.queued = 0;
      agent.asking = false;
      agent.stopReason = e.stop_reason || "completed";
      agent.error = e.error || null;
      agent.duration = typeof e.duration_s === "number" ? e.duration_s : null;
      if (e.usage) agent.tokens = usageTokens(e.usage);
      if (typeof e.turns === "number") agent.turns = e.turns;
      const tool = agent.tool;
      if (typeof agent.duration === "number" && typeof tool.duration !== "number") tool.duration = agent.duration;
      if (tool.state !== "ok" && tool.state !== "error") {
        T.setTool(tool, agent.stopReason === "completed" ? "ok" : agent.stopReason === "failed" ? "error" : "ok");
      }
      // A steer being written stays (nothing typed is lost), marked as not sent.
      if (tool.task.box.area.value.trim() && !tool.task.box.el.hidden) {
        showError(tool, "This sub-agent has ended: what you typed was not sent.");
      } else {
        closeSteer(tool);
      }
    }

    // The row: its live line while the sub-agent runs, how it ended after; Stop and
    // Steer only while it runs.
    function drawRow(tool) {
      const task = tool.task;
      if (!task) return;
      const agent = task.agent;
      const parts = [];
      if (!agent) {
        parts.push(tool.state === "ok" || tool.state === "error" ? "" : "starting");
      } else if (agent.running) {
        const running = [...agent.tools.values()];
        parts.push(agent.asking ? "asks you" : running.length ? running.join(", ") : agent.now);
        if (agent.queued) parts.push(`${agent.queued} queued`);
      } else {
        // How it ended is the row's state word; the line adds why it failed.
        if (agent.stopReason === "failed" && agent.error) parts.push(agent.error);
        if (agent.turns) parts.push(`${agent.turns} turn${agent.turns === 1 ? "" : "s"}`);
      }
      if (agent && agent.tokens) parts.push(`${tokenCount(agent.tokens)} tokens`);
      tool.detail.textContent = parts.filter(Boolean).join(" · ");
      const running = !!agent && agent.running;
      task.controls.hidden = !running;
      tool.el.dataset.agent = !agent ? "none" : running ? "running" : agent.stopReason;
      if (agent && !running) {
        tool.word.textContent = END_WORDS[agent.stopReason] || agent.stopReason;
        if (agent.stopReason === "stopped" || agent.stopReason === "aborted") tool.mark.textContent = "■";
      } else if (running) {
        tool.word.textContent = "running";
      }
      task.stop.disabled = task.stopping;
      task.stop.textContent = task.stopping ? "Stopping…" : "Stop";
      task.box.label.textContent = agent ? `Steering “${agent.description || agent.id}”` : "";
      task.box.area.placeholder = "For its next model call: Enter sends, Shift+Enter a new line, Escape closes";
    }

    function showError(tool, text) {
      tool.task.error.textContent = text;
      tool.task.error.hidden = !text;
    }

    function goneText(err, what) {
      return err.status === 404 || err.status === 409
        ? `That sub-agent has ended: ${err.message}`
        : `${what}: ${err.message}`;
    }

    async function stopAgent(tool) {
      const task = tool.task;
      const agent = task.agent;
      const id = hooks.sessionId();
      if (!agent || !agent.running || task.stopping || !id) return;
      task.stopping = true;
      showError(tool, "");
      drawRow(tool);
      try {
        await hooks.api("POST", hooks.sessionPath(id, `/agents/${encodeURIComponent(agent.id)}/abort`));
        // Its subagent_end (stopped, or how it ended first) redraws the row.
      } catch (err) {
        showError(tool, goneText(err, "Could not stop it"));
      } finally {
        task.stopping = false;
        drawRow(tool);
      }
    }

    function toggleSteer(tool) {
      const box = tool.task.box;
      if (!box.el.hidden) return closeSteer(tool);
      box.el.hidden = false;
      tool.task.steer.setAttribute("aria-expanded", "true");
      box.area.focus();
    }

    function closeSteer(tool) {
      const task = tool.task;
      if (task.box.el.hidden) return;
      task.box.el.hidden = true;
      task.steer.setAttribute("aria-expanded", "false");
      if (task.head.contains(document.activeElement) || document.activeElement === task.box.area) task.steer.focus();
    }

    async function sendSteer(tool) {
      const task = tool.task;
      const agent = task.agent;
      const id = hooks.sessionId();
      const area = task.box.area;
      const text = area.value;
      if (!agent || !id || !text.trim() || task.box.sending) return;
      task.box.sending = true;
      task.box.send.disabled = true;
      showError(tool, "");
      try {
        await hooks.api("POST", hooks.sessionPath(id, `/agents/${encodeURIComponent(agent.id)}/messages`),
          { text, deliver_as: "steer" });
        // Taken: it shows in the sub-agent's transcript when its loop takes it in.
        if (area.value === text) area.value = "";
        closeSteer(tool);
      } catch (err) {
        // The text stays in the box: nothing typed is lost.
        showError(tool, goneText(err, "Not sent"));
      } finally {
        task.box.sending = false;
        task.box.send.disabled = false;
      }
    }

    // A page (re)loaded: the sub-agents the server kept (GET /api/sessions/{id}'s
    // `subagents`), their events applied as they came, then the clock of a running one
    // set from the server's. Recorded ones (a resumed session's earlier runs) have no
    // events: their conversations are drawn as the history is.
    function restore(list, main) {
      restoreRecorded(list.filter((kept) => kept && kept.recorded), main);
      for (const kept of list) {
        if (!kept || kept.recorded || !kept.agent_id || !kept.start) continue;
        const stamp = { agent_id: kept.agent_id, parent_call_id: kept.parent_call_id };
        apply({ ...kept.start, ...stamp }, main);
        for (const e of kept.events || []) apply({ ...e, ...stamp }, main);
        if (kept.end) apply({ ...kept.end, ...stamp }, main);
        const agent = agents.get(kept.agent_id);
        if (agent && agent.running && typeof kept.elapsed_s === "number") {
          agent.startedAt = Date.now() - kept.elapsed_s * 1000;
          agent.tool.startedAt = agent.startedAt;
        }
      }
    }

    // Each under the task row its call made, in the main transcript or in another
    // sub-agent's. A sub-agent's own sub-agent ended first, so it comes first in the
    // record: it waits until its parent's transcript has drawn its row. One whose row
    // is nowhere (its call was compacted away) is not drawn.
    function restoreRecorded(list, main) {
      let waiting = list.filter((kept) => kept.agent_id && kept.parent_call_id);
      let placed = true;
      while (waiting.length && placed) {
        placed = false;
        waiting = waiting.filter((kept) => {
          const tool = taskRow(kept.parent_call_id, main);
          if (!tool) return true;
          if (tool.task && !tool.task.agent) {
            drawRecorded(tool, kept);
            placed = true;
          }
          return false;
        });
      }
    }

    function taskRow(callId, main) {
      const views = [main, ...recorded.map((a) => a.view), ...[...agents.values()].map((a) => a.view)];
      for (const view of views) {
        const tool = view.tools.get(callId);
        if (tool) return tool;
      }
      return null;
    }

    function drawRecorded(tool, kept) {
      const task = tool.task;
      const description = typeof kept.description === "string" ? kept.description : "";
      const agent = {
        id: kept.agent_id, tool, description, running: false, now: "", recorded: true,
        tools: new Map(), tokens: 0, turns: 0, queued: 0, asking: false,
        startedAt: null, duration: null, stopReason: null, error: null,
      };
      task.agent = agent;
      tool.el.dataset.agentId = kept.agent_id;
      tool.el.dataset.recorded = "true";
      if (description) tool.name.textContent = T.callLabel("task", { description });
      agent.view = T.create(task.transcript, { adding: hooks.adding, onToolRow });
      const messages = Array.isArray(kept.messages) ? kept.messages : [];
      if (messages.length) task.empty.remove();
      agent.view.renderHistory(messages);
      recorded.push(agent);
      ended(agent, { stop_reason: kept.stop_reason, usage: kept.usage, turns: kept.turns });
      drawRow(tool);
    }

    // A sub-agent's question is open (or answered): its row says it asks.
    function asking(e, open) {
      const agent = agents.get(e.agent_id);
      if (!agent) return;
      agent.asking = open;
      drawRow(agent.tool);
    }

    function tick(now) {
      for (const agent of agents.values()) {
        if (agent.running) agent.tool.durationEl.textContent = T.seconds(now - agent.startedAt);
      }
    }

    function viewOf(agentId) {
      const agent = agents.get(agentId);
      return agent ? agent.view : null;
    }

    return { onToolRow, apply, restore, asking, tick, viewOf, reset: () => { agents.clear(); recorded.length = 0; }, agents };
  }

  window.InkSubagents = { create };
})();
