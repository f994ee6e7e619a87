// ink serve: the browser page. No framework and no build step: one state object, the
// server's public events applied to it in order (deduplicated by `seq`), and the DOM
// drawn from it. Text from the server only ever reaches the page through textContent or
// the escaping markdown renderer (markdown.js).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const md = window.InkMarkdown;

  const EVENT_TYPES = [
    "agent_start", "turn_start", "user_message", "message_update", "message_end",
    "tool_execution_start", "tool_execution_running", "tool_execution_settled",
    "tool_execution_end", "turn_end", "queue_update", "auto_retry_start", "auto_retry_end",
    "agent_end", "state_change", "agent_settled", "input_restored", "server_waiting",
    "jobs_update", "approval_request", "approval_resolved", "error", "notice", "replay_gap",
    "subagent_start", "subagent_end", "rewound",
  ];
  const MODE_LABELS = window.InkTranscript.MODE_LABELS;

  const ui = {
    app: $("app"), transcript: $("transcript"), empty: $("empty"), jump: $("jump"),
    input: $("input"), send: $("send"), stop: $("stop"), composer: $("composer"),
    state: $("state"), elapsed: $("elapsed"), model: $("model"), sessionId: $("session-id"),
    connection: $("connection"), connectionText: $("connection-text"),
    sessionList: $("session-list"), newSession: $("new-session"), sidebarToggle: $("sessions-toggle"),
    scrim: $("scrim"), activity: $("activity"), activityText: $("activity-text"),
    queue: $("queue"), queueList: $("queue-list"), queueCount: $("queue-count"),
    queuePaused: $("queue-paused"), queueToEditor: $("queue-to-editor"),
    banner: $("banner"), hints: $("hints"),
    question: $("question"), questionTitle: $("question-title"), questionCount: $("question-count"),
    questionWhy: $("question-why"), questionBody: $("question-body"), questionNote: $("question-note"),
    questionRule: $("question-rule"), denyForm: $("deny-form"), denyReason: $("deny-reason"),
    denySend: $("deny-send"), answerDeny: $("answer-deny"),
    answerButtons: [$("answer-allow"), $("answer-session"), $("answer-always")],
  };

  // The token of the first load also goes in an Authorization header (the cookie the
  // server set is what EventSource uses); it leaves the address bar at once.
  const params = new URLSearchParams(location.search);
  const token = params.get("token");
  if (token !== null) {
    params.delete("token");
    const rest = params.toString();
    history.replaceState(null, "", location.pathname + (rest ? `?${rest}` : "") + location.hash);
  }

  const s = {
    sessions: [],
    id: null,            // the session shown
    lastSeq: 0,          // the newest event applied: anything at or below it is a duplicate
    source: null,        // EventSource
    retryTimer: null,
    retryDelay: 500,
    reloading: null,     // events held while the state is reloaded after a replay gap
    runState: "none",    // idle | running | interrupting | exited | settled
    stopReason: null,
    runStartedAt: null,
    phase: "",
    queue: [],
    queuePaused: false,
    editing: null,       // {id, mode, li, area, sent}
    sending: false,
    starting: false,     // a first send is opening a session
    creating: null,      // the session + New session is starting (a promise), until shown
    reachable: null,     // whether the server answered the last request (null: not asked yet)
    streamDown: false,   // the event stream dropped and is being reopened
    stopping: false,
    bannerTimer: null,
    approvals: new Map(), // request_id -> approval_request event, in the order asked
    answering: null,     // the request_id whose answer is on its way
    denying: null,       // the request_id the reason field is open for
  };

  // ---- HTTP ------------------------------------------------------------------------

  class ApiError extends Error {
    constructor(status, data) {
      super((data && (data.message || data.error)) || `HTTP ${status}`);
      this.status = status;
      this.code = data && data.error;
    }
  }

  async function api(method, path, body) {
    const headers = {};
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let res;
    try {
      res = await fetch(path, {
        method, headers, credentials: "same-origin",
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      setReachable(false); // no answer at all: the server is down or the network is
      throw new ApiError(0, { message: "the server is unreachable" });
    }
    setReachable(true);
    let data = null;
    try { data = await res.json(); } catch { data = null; }
    if (!res.ok) {
      if (res.status === 401) showBanner("Not signed in: open the address `ink serve` printed (it holds ?token=…).", "error", 0);
      throw new ApiError(res.status, data);
    }
    return data;
  }

  const sessionPath = (id, rest = "") => `/api/sessions/${encodeURIComponent(id)}${rest}`;

  // ---- banner ------------------------------------------------------------------------

  function showBanner(text, kind = "error", ms = 6000) {
    ui.banner.textContent = text;
    ui.banner.className = `banner ${kind}`;
    ui.banner.hidden = false;
    clearTimeout(s.bannerTimer);
    if (ms > 0) s.bannerTimer = setTimeout(() => { ui.banner.hidden = true; }, ms);
  }

  // ---- sessions ----------------------------------------------------------------------

  async function loadSessions() {
    try {
      const data = await api("GET", "/api/sessions");
      s.sessions = data.sessions || [];
      renderSessions();
    } catch (err) {
      // 0: no answer at all, which the connection pill shows.
      if (err.status !== 401 && err.status !== 0) console.warn("session list:", err);
    }
  }

  // Items are kept and updated in place, never rebuilt: the list is reloaded every few
  // seconds, and a click whose press and release land on two different elements (the
  // old item, then its replacement) is no click at all.
  function renderSessions() {
    if (s.sessions.length === 0) {
      const li = document.createElement("li");
      li.className = "none";
      li.textContent = "No sessions in this workspace yet.";
      ui.sessionList.replaceChildren(li);
      return;
    }
    const kept = new Map();
    for (const li of ui.sessionList.querySelectorAll("li.session")) kept.set(li.dataset.id, li);
    const items = s.sessions.map((info) => {
      const li = kept.get(String(info.id)) || newSessionItem();
      kept.delete(String(info.id));
      fillSessionItem(li, info);
      return li;
    });
    for (const li of ui.sessionList.querySelectorAll("li:not(.session)")) li.remove();
    for (const li of kept.values()) li.remove();
    items.forEach((li, index) => {
      if (ui.sessionList.children[index] !== li) ui.sessionList.insertBefore(li, ui.sessionList.children[index] || null);
    });
  }

  function newSessionItem() {
    const li = document.createElement("li");
    li.className = "session";
    const dot = document.createElement("span");
    dot.className = "dot";
    const title = document.createElement("span");
    title.className = "title";
    const meta = document.createElement("span");
    meta.className = "meta";
    li.append(dot, title, meta);
    // The item's session as last drawn: a click opens what the item shows now.
    li.addEventListener("click", () => openSession(li.info));
    return li;
  }

  function fillSessionItem(li, info) {
    li.info = info;
    li.dataset.id = info.id;
    li.classList.toggle("current", info.id === s.id);
    li.classList.toggle("open", !!info.open);
    li.classList.toggle("busy", !!info.busy);
    const title = li.querySelector(".title");
    title.textContent = info.first_prompt || "New session";
    title.title = info.first_prompt || "";
    const count = info.message_count || 0;
    const where = info.busy ? "running" : info.open ? "open" : "saved";
    li.querySelector(".meta").textContent =
      `${String(info.id).slice(0, 8)} · ${count} msg${count === 1 ? "" : "s"} · ${where}`;
  }

  async function openSession(info) {
    closeDrawer();
    if (info.id === s.id) return;
    if (info.open) return selectSession(info.id);
    try {
      const data = await api("POST", "/api/sessions", { resume: info.id });
      await selectSession(data.session.session_id);
      loadSessions();
    } catch (err) {
      showBanner(err.code === "locked"
        ? `That session is open in another ink process: ${err.message}`
        : `Could not open the session: ${err.message}`);
    }
  }

  // Resolves to whether a session was started (and is shown now). While one is being
  // started, a second call (a send typed right after a click on + New session, or a
  // second click) waits for it rather than starting another.
  function newSession() {
    if (!s.creating) {
      s.creating = startSession().finally(() => { s.creating = null; });
    }
    return s.creating;
  }

  async function startSession() {
    closeDrawer();
    try {
      const data = await api("POST", "/api/sessions", {});
      await selectSession(data.session.session_id);
      loadSessions();
      ui.input.focus();
      return s.id === data.session.session_id;
    } catch (err) {
      showBanner(`Could not start a session: ${err.message}`);
      return false;
    }
  }

  async function selectSession(id) {
    closeStream();
    rewind.leave();
    s.id = id;
    history.replaceState(null, "", `${location.pathname}${location.search}#${encodeURIComponent(id)}`);
    renderSessions();
    let data;
    try {
      data = await api("GET", sessionPath(id));
    } catch (err) {
      if (s.id === id) showBanner(`Could not load the session: ${err.message}`);
      return;
    }
    if (s.id !== id) return; // another session was picked meanwhile
    resetTranscript();
    drawHistory(data.messages || []);
    agents.restore(data.subagents || [], main);
    applySnapshot(data.session);
    s.lastSeq = typeof data.session.last_seq === "number" ? data.session.last_seq : null;
    openStream();
    scrollToEnd();
  }

  function applySnapshot(snap) {
    showModel(snap.model || "", snap.demo === true);
    ui.sessionId.textContent = String(snap.session_id || "").slice(0, 12);
    const state = snap.state === "running" || snap.state === "interrupting" ? snap.state
      : snap.state === "exited" ? "exited" : "idle";
    s.stopReason = null;
    if (state === "running" || state === "interrupting") s.runStartedAt ??= Date.now();
    setRunState(state);
    renderQueue(snap.queue || [], !!snap.queue_paused);
    // The questions open now: a page loaded while one waits shows it again.
    s.approvals = new Map();
    for (const asked of Array.isArray(snap.approvals) ? snap.approvals : []) {
      if (asked && asked.request_id) s.approvals.set(asked.request_id, asked);
    }
    if (!s.approvals.has(s.answering)) s.answering = null;
    renderQuestion();
  }

  // The built-in demo model (no API key or base URL configured) is named as such: its
  // own label says "(offline)", which next to the connection read as a server down.
  function showModel(name, demo) {
    ui.model.textContent = demo ? "demo model" : name;
    ui.model.title = demo ? "ink's built-in demo model: scripted replies, nothing leaves this machine (no API key or base URL is configured)" : "model";
    ui.model.dataset.demo = String(demo);
  }

  // ---- the event stream --------------------------------------------------------------

  function closeStream() {
    clearTimeout(s.retryTimer);
    if (s.source) s.source.close();
    s.source = null;
    s.reloading = null;
    s.streamDown = false;
    setConnection(s.reachable === false ? "unreachable" : s.reachable ? "live" : "connecting");
  }

  // From the newest event applied (or `from`: tests ask for a replay the page must
  // deduplicate).
  function openStream(from = s.lastSeq) {
    const id = s.id;
    const query = from === null ? "" : `?last_event_id=${from}`;
    const source = new EventSource(sessionPath(id, `/events${query}`));
    s.source = source;
    const onEvent = (message) => {
      if (s.source !== source) return;
      onWire(message);
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, onEvent);
    source.onmessage = onEvent;
    source.onopen = () => {
      if (s.source !== source) return;
      s.retryDelay = 500;
      s.streamDown = false;
      s.reachable = true;
      setConnection("live");
    };
    source.onerror = () => {
      if (s.source !== source) return;
      loadSessions(); // does the server still answer? (the pill says which it is)
      if (source.readyState === EventSource.CLOSED) {
        // The browser gave up (an HTTP error, not a dropped connection): reconnect from
        // the newest event applied, a little later each time.
        s.streamDown = true;
        setConnection(s.reachable === false ? "unreachable" : "reconnecting");
        clearTimeout(s.retryTimer);
        s.retryTimer = setTimeout(() => {
          if (s.source === source && s.id === id) openStream();
        }, s.retryDelay);
        s.retryDelay = Math.min(s.retryDelay * 2, 8000);
      } else {
        // EventSource reconnects by itself and sends Last-Event-ID.
        s.streamDown = true;
        setConnection(s.reachable === false ? "unreachable" : "reconnecting");
      }
    };
  }

  // The pill names the page's link to the server: connected (the last request, or the
  // event stream, was answered), reconnecting… (the stream dropped, the server answers),
  // server unreachable (a request got no answer at all). Never the model's state.
  const CONNECTION_TEXT = {
    connecting: "connecting…", live: "connected", reconnecting: "reconnecting…", unreachable: "server unreachable",
  };
  const CONNECTION_TITLE = {
    connecting: "Reaching the server…",
    live: "Connected to ink serve",
    reconnecting: "The event stream dropped; reconnecting (nothing is lost: it resumes where it stopped)",
    unreachable: "ink serve does not answer: is it still running?",
  };
  function setConnection(status) {
    ui.connection.dataset.status = status;
    ui.connection.title = CONNECTION_TITLE[status];
    ui.connectionText.textContent = CONNECTION_TEXT[status];
  }

  function setReachable(yes) {
    if (s.reachable === yes) return;
    s.reachable = yes;
    setConnection(!yes ? "unreachable" : s.streamDown ? "reconnecting" : "live");
  }

  function onWire(message) {
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    if (!event || typeof event !== "object") return;
    if (event.type === "replay_gap") {
      reloadAfterGap();
      return;
    }
    if (event.session_id && event.session_id !== s.id) return;
    const seq = typeof event.seq === "number" ? event.seq : Number(message.lastEventId);
    if (s.reloading !== null) {
      s.reloading.push({ seq, event });
      return;
    }
    take(seq, event);
  }

  function take(seq, event) {
    if (Number.isFinite(seq)) {
      if (s.lastSeq !== null && seq <= s.lastSeq) return; // seen already
      s.lastSeq = seq;
    }
    try {
      apply(event);
    } catch (err) {
      console.error("event", event, err);
    }
  }

  // Events were missed (older than the server's replay buffer): draw the session again
  // from its state, then apply what arrived meanwhile that the state does not hold.
  async function reloadAfterGap() {
    if (s.reloading !== null) return;
    s.reloading = [];
    const id = s.id;
    try {
      const data = await api("GET", sessionPath(id));
      if (s.id !== id) return;
      resetTranscript();
      drawHistory(data.messages || []);
      agents.restore(data.subagents || [], main);
      applySnapshot(data.session);
      const held = s.reloading || [];
      s.reloading = null;
      if (typeof data.session.last_seq === "number") s.lastSeq = data.session.last_seq;
      for (const { seq, event } of held) take(seq, event);
      scrollToEnd();
    } catch (err) {
      const held = s.reloading || [];
      s.reloading = null;
      for (const { seq, event } of held) take(seq, event);
      showBanner(`Some events were missed and the session could not be reloaded: ${err.message}`);
    }
  }

  // ---- applying events ---------------------------------------------------------------

  function apply(e) {
    // A sub-agent's events go to its task row, and only there; its question (and the
    // answer) is the page's, as the gate is one.
    if (e.agent_id && e.type !== "approval_request" && e.type !== "approval_resolved") {
      agents.apply(e, main);
      return;
    }
    if (e.agent_id) agents.asking(e, e.type === "approval_request");
    switch (e.type) {
      case "state_change":
        if (e.state === "running" && s.runState !== "running" && s.runState !== "interrupting") {
          s.runStartedAt = Date.now();
          s.stopReason = null;
          setPhase("waiting for the model");
          setTimeout(loadSessions, 300); // its title and busy dot
        }
        setRunState(e.state);
        break;
      case "agent_start":
        if (e.kind === "shell") main.addUser(e.prompt || "", "shell");
        break;
      case "user_message":
        main.applyEvent(e);
        rewind.markLast(e.entry_id);
        break;
      case "message_end":
      case "tool_execution_running":
      case "tool_execution_settled":
      case "tool_execution_end":
      case "error":
      case "notice":
        main.applyEvent(e);
        break;
      case "turn_start":
        main.applyEvent(e);
        setPhase("waiting for the model");
        break;
      case "message_update":
        main.applyEvent(e);
        if (e.delta) setPhase(e.delta.type === "thinking" ? "thinking" : "streaming the answer");
        break;
      case "tool_execution_start":
        main.applyEvent(e);
        setPhase("running tools");
        break;
      case "queue_update":
        renderQueue(e.entries || [], !!e.paused);
        break;
      case "auto_retry_start":
        main.applyEvent(e);
        setPhase(`retrying in ${e.delay_s}s`);
        break;
      case "agent_end":
        main.endAnswer();
        if (!e.will_retry && e.stop_reason === "aborted") main.addNotice("Interrupted.", "warning");
        else if (!e.will_retry && e.stop_reason === "max_iterations") main.addNotice("Stopped: the most model calls one run may make.", "warning");
        break;
      case "agent_settled":
        main.endAnswer();
        // A settled run waits for nothing: no question outlives it.
        s.approvals.clear();
        s.answering = null;
        renderQuestion();
        s.stopReason = e.stop_reason || null;
        if (s.runState !== "exited") setRunState("settled");
        // The server lets go of the session just after it settles.
        setTimeout(loadSessions, 300);
        setTimeout(loadSessions, 1500);
        break;
      case "rewound":
        reloadAfterGap(); // the conversation went back (here or in another page)
        break;
      case "input_restored":
        restoreInput(e.text || "");
        break;
      case "approval_request":
        s.approvals.set(e.request_id, e);
        renderQuestion();
        break;
      case "approval_resolved": {
        s.approvals.delete(e.request_id);
        if (s.answering === e.request_id) s.answering = null;
        const view = viewOf(e);
        if (view.tools.has(e.call_id) && e.decision !== "deny") setTool(view.toolRow(e.call_id), "running");
        renderQuestion();
        break;
      }
      case "server_waiting":
        setPhase(e.over ? "streaming the answer"
          : `waiting for the server (${Math.round(e.seconds)} s)${e.limit_s ? ` · gives up at ${e.limit_s} s` : ""}`);
        break;
      default:
        break; // turn_end, auto_retry_end, jobs_update: nothing to draw
    }
  }

  // ---- run state -------------------------------------------------------------------

  function busy() {
    return s.runState === "running" || s.runState === "interrupting";
  }

  function setRunState(state) {
    s.runState = state;
    renderStatePill();
    ui.app.dataset.state = state;
    // With no session shown the box still takes text: the first send opens a session.
    ui.input.disabled = state === "exited";
    ui.stop.disabled = !busy() || s.stopping;
    ui.activity.hidden = !busy();
    if (state === "interrupting") setPhase("interrupting: closing the request, stopping tools");
    if (!busy()) {
      s.stopping = false;
      ui.stop.textContent = "■ Stop";
    }
    ui.input.placeholder = busy()
      ? "Type to steer (Enter) or queue a follow-up (Alt+Enter)"
      : state === "exited" ? "This session has exited: + New session starts another"
      : "Ask ink to do something (Enter sends)";
    renderSend();
    renderHints();
    rewind.render();
    tick();
  }

  function waiting() {
    return busy() && s.approvals.size > 0;
  }

  // Send is enabled only when a send can happen: text typed, the box enabled, no first
  // send still opening its session.
  function canSend() {
    return !ui.input.disabled && !s.starting && ui.input.value.trim() !== "";
  }

  function renderSend() {
    ui.send.disabled = !canSend();
  }

  // The state in the top bar; while a question is open, that the run waits for you.
  function renderStatePill() {
    const state = s.runState;
    const shown = waiting() ? "waiting for your answer"
      : state === "settled" ? `settled · ${s.stopReason || "done"}` : state;
    ui.state.textContent = shown;
    ui.state.dataset.state = state;
    ui.state.dataset.stop = s.stopReason || "";
    ui.state.dataset.waiting = String(waiting());
  }

  function setPhase(text) {
    s.phase = text;
    ui.activityText.textContent = waiting() ? "waiting for your answer" : text;
  }

  function renderHints() {
    const parts = waiting()
      ? [["the buttons above", "answer the question"], ["Enter", "steers (it does not answer)"], ["Alt+Enter", "queues a follow-up"]]
      : busy()
      ? [["Enter", "steers"], ["Alt+Enter", "queues a follow-up"], ["Shift+Enter", "new line"], ["Alt+Up", "queue to editor"]]
      : [["Enter", "sends"], ["Shift+Enter", "new line"]];
    ui.hints.replaceChildren();
    parts.forEach(([key, what], i) => {
      if (i > 0) ui.hints.append(" · ");
      const b = document.createElement("b");
      b.textContent = key;
      ui.hints.append(b, ` ${what}`);
    });
  }

  // Elapsed times tick while something runs.
  function tick() {
    const now = Date.now();
    ui.elapsed.textContent = busy() && s.runStartedAt ? window.InkTranscript.seconds(now - s.runStartedAt) : "";
    main.tick(now);
    agents.tick(now);
  }
  setInterval(tick, 100);

  // ---- transcript ------------------------------------------------------------------

  function resetTranscript() {
    main.reset();
    agents.reset();
    ui.jump.hidden = true;
  }

  function atBottom() {
    const t = ui.transcript;
    return t.scrollHeight - t.scrollTop - t.clientHeight < 48;
  }

  function scrollToEnd() {
    ui.transcript.scrollTop = ui.transcript.scrollHeight;
    ui.jump.hidden = true;
  }

  // Follow the output while the reader is at the end; otherwise offer a jump.
  function adding(draw) {
    const follow = atBottom();
    draw();
    if (follow) scrollToEnd();
    else ui.jump.hidden = false;
  }

  // The main transcript is the top-level agent's; each sub-agent's is drawn under its
  // task row (subagents.js), never into this one.
  const agents = window.InkSubagents.create({ adding, api, sessionPath, sessionId: () => s.id });
  const main = window.InkTranscript.create(ui.transcript, { adding, onToolRow: agents.onToolRow });
  const setTool = window.InkTranscript.setTool;
  // Going back (rewind.js): a ↶ button on each of the user's messages, and its dialog.
  const rewind = window.InkRewind.create({
    container: ui.transcript, api, sessionPath, sessionId: () => s.id, busy,
    restoreInput, reload: reloadAfterGap, noticeBefore: ui.banner,
  });

  function drawHistory(messages) {
    main.renderHistory(messages);
    rewind.markHistory(messages);
  }

  // The view a tool call of this event is drawn in: its sub-agent's, or the main one.
  function viewOf(e) {
    return (e.agent_id && agents.viewOf(e.agent_id)) || main;
  }

  // ---- the queue -------------------------------------------------------------------

  function entryKind(entry) {
    return entry.shell ? "shell" : entry.mode;
  }

  function renderQueue(entries, paused) {
    s.queue = entries;
    s.queuePaused = paused;
    const editing = s.editing;
    const rows = [];
    for (const [index, entry] of entries.entries()) {
      if (editing && editing.id === entry.id) {
        editing.mode = entry.mode;
        setBadge(editing.li.querySelector(".q-badge"), entry);
        setArrows(editing.li, index, entries.length);
        rows.push(editing.li);
      } else {
        rows.push(queueRow(entry, index, entries.length));
      }
    }
    if (editing && !entries.some((e) => e.id === editing.id)) {
      // The model took (or someone removed) the entry being edited: the edit stays.
      markSent(editing);
      rows.push(editing.li);
    }
    placeRows(rows, editing ? editing.li : null);
    ui.queueCount.textContent = String(entries.length);
    ui.queuePaused.hidden = !paused;
    ui.queue.hidden = rows.length === 0;
  }

  // The row being edited is never taken out of the list: moving a focused field blurs
  // it, and a blur saves the edit. The other rows are put around it.
  function placeRows(rows, keep) {
    const list = ui.queueList;
    if (!keep || !keep.isConnected || keep.parentNode !== list) {
      list.replaceChildren(...rows);
      return;
    }
    for (const child of [...list.children]) if (child !== keep) child.remove();
    const at = rows.indexOf(keep);
    for (const row of rows.slice(0, at)) list.insertBefore(row, keep);
    for (const row of rows.slice(at + 1)) list.append(row);
  }

  function setBadge(badge, entry) {
    const kind = entryKind(entry);
    badge.className = `q-badge mode-${kind}`;
    badge.textContent = MODE_LABELS[kind] || kind;
    badge.title = kind === "shell" ? "a shell line runs after the run completes" : "click: switch steer / follow-up";
  }

  function setArrows(li, index, count) {
    li.querySelector(".up").disabled = index === 0;
    li.querySelector(".down").disabled = index === count - 1;
  }

  function button(cls, text, title, onClick) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `q-ctl ${cls}`;
    b.textContent = text;
    b.title = title;
    b.setAttribute("aria-label", title);
    b.addEventListener("click", (ev) => { ev.stopPropagation(); onClick(); });
    return b;
  }

  function queueRow(entry, index, count) {
    const li = document.createElement("li");
    li.className = "q-entry";
    li.dataset.id = String(entry.id);
    const grip = document.createElement("span");
    grip.className = "q-grip";
    grip.textContent = "⠿";
    grip.title = "drag to reorder";
    grip.addEventListener("pointerdown", (ev) => startDrag(ev, li, entry));
    const badge = document.createElement("button");
    badge.type = "button";
    setBadge(badge, entry);
    badge.addEventListener("click", () => {
      if (!entry.shell) patchEntry(entry.id, { mode: entry.mode === "steer" ? "follow_up" : "steer" });
    });
    const text = document.createElement("span");
    text.className = "q-text";
    const [first, ...rest] = entry.text.split("\n");
    text.textContent = first;
    text.title = "click to edit";
    if (rest.length) {
      const more = document.createElement("span");
      more.className = "more";
      more.textContent = ` (+${rest.length} line${rest.length > 1 ? "s" : ""})`;
      text.append(more);
    }
    text.addEventListener("click", () => startEdit(li, entry));
    li.append(
      grip, badge, text,
      button("up", "↑", "move up", () => patchEntry(entry.id, { position: indexOf(entry.id) - 1 })),
      button("down", "↓", "move down", () => patchEntry(entry.id, { position: indexOf(entry.id) + 1 })),
      button("delete", "✕", "delete", () => deleteEntry(entry.id)),
    );
    setArrows(li, index, count);
    return li;
  }

  function indexOf(id) {
    return s.queue.findIndex((e) => e.id === id);
  }

  async function patchEntry(id, change) {
    try {
      const data = await api("PATCH", sessionPath(s.id, `/queue/${id}`), change);
      if (data && Array.isArray(data.entries)) renderQueue(data.entries, s.queuePaused);
      return true;
    } catch (err) {
      if (err.code === "gone") showBanner("That entry is no longer queued (the model took it, or it was removed).", "info", 4000);
      else showBanner(`Could not change the entry: ${err.message}`);
      return err;
    }
  }

  async function deleteEntry(id) {
    try {
      await api("DELETE", sessionPath(s.id, `/queue/${id}`));
      renderQueue(s.queue.filter((e) => e.id !== id), s.queuePaused);
    } catch (err) {
      if (err.code !== "gone") showBanner(`Could not delete the entry: ${err.message}`);
    }
  }

  function startEdit(li, entry) {
    if (s.editing) return;
    const text = li.querySelector(".q-text");
    const area = document.createElement("textarea");
    area.className = "q-edit";
    area.value = entry.text;
    area.rows = Math.min(6, entry.text.split("\n").length);
    const editing = { id: entry.id, mode: entry.mode, li, area, sent: false, done: false };
    s.editing = editing;
    li.classList.add("editing");
    text.replaceWith(area);
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
    area.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        saveEdit(editing);
      } else if (ev.key === "Escape") {
        ev.preventDefault();
        endEdit(editing);
      }
    });
    area.addEventListener("input", () => {
      area.rows = Math.min(6, area.value.split("\n").length);
    });
    // Leaving the field keeps what was typed: nothing typed is lost.
    area.addEventListener("blur", () => {
      if (!editing.done && area.value !== entry.text) saveEdit(editing);
      else if (!editing.done) endEdit(editing);
    });
  }

  function endEdit(editing) {
    editing.done = true;
    if (s.editing === editing) s.editing = null;
    renderQueue(s.queue, s.queuePaused);
    ui.input.focus();
  }

  function markSent(editing) {
    if (editing.sent) return;
    editing.sent = true;
    editing.li.classList.add("sent");
    const note = document.createElement("div");
    note.className = "q-note";
    note.textContent = "sent — Enter queues your edit as a new entry";
    editing.li.style.flexWrap = "wrap";
    editing.li.append(note);
    for (const b of editing.li.querySelectorAll(".q-ctl")) b.disabled = true;
  }

  async function saveEdit(editing) {
    if (editing.done) return;
    const text = editing.area.value;
    if (!text.trim()) {
      showBanner("The entry is empty: press Escape to keep it as it was, or ✕ to delete it.", "info", 4000);
      return;
    }
    editing.done = true;
    if (!editing.sent) {
      const result = await patchEntry(editing.id, { text });
      if (result === true) return endEdit(editing);
      if (!(result instanceof ApiError && result.code === "gone")) {
        editing.done = false; // keep editing: the server said no
        return;
      }
      markSent(editing);
    }
    // The entry was taken before the edit was saved: queue the edit as a new one.
    endEdit(editing);
    await sendText(text, editing.mode === "follow_up" ? "follow_up" : "steer");
  }

  // Alt+Up: every queued entry back into the text box, above what is there.
  async function queueToEditor() {
    if (!s.id || s.queue.length === 0) return;
    try {
      const data = await api("DELETE", sessionPath(s.id, "/queue"));
      const removed = (data && data.removed) || [];
      if (removed.length) restoreInput(removed.map((e) => e.text).join("\n\n"));
      renderQueue([], s.queuePaused);
    } catch (err) {
      showBanner(`Could not take the queue back: ${err.message}`);
    }
  }

  // Drag a row by its grip; the drop position is where the pointer is among the others.
  function startDrag(ev, li, entry) {
    if (ev.button !== 0 || s.editing) return;
    ev.preventDefault();
    const grip = ev.currentTarget;
    grip.setPointerCapture(ev.pointerId);
    const others = [...ui.queueList.children].filter((r) => r !== li);
    const from = indexOf(entry.id);
    const startY = ev.clientY;
    let target = from;
    li.classList.add("dragging");
    const mark = () => {
      others.forEach((r) => r.classList.remove("drop-before", "drop-after"));
      if (target === from) return;
      if (target < others.length) others[target].classList.add("drop-before");
      else others[others.length - 1].classList.add("drop-after");
    };
    const move = (e) => {
      li.style.transform = `translateY(${e.clientY - startY}px)`;
      target = others.filter((r) => {
        const box = r.getBoundingClientRect();
        return box.top + box.height / 2 < e.clientY;
      }).length;
      mark();
    };
    const up = () => {
      grip.removeEventListener("pointermove", move);
      grip.removeEventListener("pointerup", up);
      grip.removeEventListener("pointercancel", up);
      li.classList.remove("dragging");
      li.style.transform = "";
      others.forEach((r) => r.classList.remove("drop-before", "drop-after"));
      if (target !== from) patchEntry(entry.id, { position: target });
    };
    grip.addEventListener("pointermove", move);
    grip.addEventListener("pointerup", up);
    grip.addEventListener("pointercancel", up);
  }

  // ---- the approval question -------------------------------------------------------
  //
  // The server asks before bash, write and edit (as the TUI does). One question shows at
  // a time, the oldest open; it is answered only by its buttons (a click, or Enter /
  // Space on a focused button, as browsers do). Nothing typed in the text box answers
  // it: Enter there steers as always. Focus is never moved onto the buttons.

  const QUESTION_TITLES = { bash: "Run this command?", write: "Write this file?", edit: "Edit this file?" };
  const DECISION_WORDS = { allow: "allowed once", session: "allowed for this session", always: "always allowed", deny: "denied" };

  function currentQuestion() {
    for (const asked of s.approvals.values()) return asked;
    return null;
  }

  function renderQuestion() {
    const asked = currentQuestion();
    if (!asked) {
      ui.question.hidden = true;
      ui.question.dataset.requestId = "";
      s.denying = null;
      ui.denyForm.hidden = true;
      afterQuestion();
      return;
    }
    const fresh = ui.question.dataset.requestId !== asked.request_id;
    ui.question.dataset.requestId = asked.request_id;
    ui.question.dataset.tool = asked.tool_name || "";
    const tool = viewOf(asked).tools.get(asked.call_id);
    if (tool) setTool(tool, "waiting");
    if (fresh) {
      const args = asked.arguments && typeof asked.arguments === "object" ? asked.arguments : {};
      ui.questionTitle.textContent = QUESTION_TITLES[asked.tool_name] || `Run ${asked.tool_name}?`;
      // A sub-agent's question says which one asks (the gate is the same for all).
      const who = asked.agent_description ? `Asked by the sub-agent “${asked.agent_description}”. ` : "";
      ui.questionWhy.textContent = who + (asked.why || "");
      drawQuestionBody(asked, args);
      const note = asked.preview_note || "";
      ui.questionNote.textContent = note;
      ui.questionNote.hidden = !note;
      const offered = Array.isArray(asked.decisions) ? asked.decisions : ["allow", "deny"];
      for (const b of ui.answerButtons) b.hidden = !offered.includes(b.dataset.decision);
      ui.answerDeny.hidden = !offered.includes("deny");
      ui.questionRule.textContent = asked.rule
        ? `"Allow for this session" and "Always" allow ${asked.rule} from now on ("Always" saves it in the workspace's .ink/config.toml).`
        : "";
      ui.questionRule.hidden = !asked.rule;
      s.denying = null;
      ui.denyForm.hidden = true;
      ui.denyReason.value = "";
    }
    const others = s.approvals.size - 1;
    ui.questionCount.textContent = others > 0 ? `+${others} more after this` : "";
    setAnswering(s.answering === asked.request_id);
    ui.question.hidden = false;
    afterQuestion();
  }

  // The state line, the activity line and the hints follow whether a question is open.
  function afterQuestion() {
    renderStatePill();
    if (busy()) ui.activityText.textContent = waiting() ? "waiting for your answer" : s.phase;
    renderHints();
  }

  function drawQuestionBody(asked, args) {
    const body = ui.questionBody;
    body.replaceChildren();
    body.className = "question-body";
    if (asked.tool_name === "bash") {
      body.classList.add("command");
      body.textContent = typeof args.command === "string" ? args.command : JSON.stringify(args, null, 2);
      return;
    }
    const path = asked.path || (typeof args.path === "string" ? args.path : "");
    const head = document.createElement("div");
    head.className = "diff-path";
    head.textContent = path;
    body.append(head);
    const preview = asked.preview || "";
    if (!preview) {
      // No diff (the note says why): what the call would write, as it asked.
      const raw = document.createElement("div");
      raw.className = "diff-raw";
      raw.textContent = typeof args.content === "string" ? args.content
        : args.edits ? JSON.stringify(args.edits, null, 2) : "";
      body.append(raw);
      return;
    }
    for (const line of preview.replace(/\n$/, "").split("\n")) {
      const el = document.createElement("div");
      el.className = line.startsWith("+++") || line.startsWith("---") ? "diff-file"
        : line.startsWith("@@") ? "diff-hunk"
        : line.startsWith("+") ? "diff-add"
        : line.startsWith("-") ? "diff-del" : "diff-same";
      el.textContent = line || " ";
      body.append(el);
    }
  }

  function setAnswering(on) {
    for (const b of [...ui.answerButtons, ui.answerDeny, ui.denySend]) b.disabled = on;
    ui.denyReason.disabled = on;
    ui.question.dataset.answering = String(on);
  }

  async function answerQuestion(decision, reason) {
    const asked = currentQuestion();
    if (!asked || !s.id || s.answering) return;
    const id = asked.request_id;
    s.answering = id;
    setAnswering(true);
    const body = decision === "deny" && reason ? { decision, reason } : { decision };
    try {
      await api("POST", sessionPath(s.id, `/approvals/${encodeURIComponent(id)}`), body);
      // Answered: the approval_resolved event takes the question away (the buttons stay
      // disabled until then, so it cannot be answered twice).
    } catch (err) {
      if (err.status === 409 || err.status === 404) {
        showBanner(`That question was closed already: ${err.message}`, "info", 5000);
        s.approvals.delete(id);
      } else {
        showBanner(`The answer was not taken: ${err.message}`);
      }
      s.answering = null;
      renderQuestion();
      return;
    }
    // `answering` stays set (the buttons disabled) until approval_resolved takes the
    // question away, which may have happened already.
    if (!s.approvals.has(id) && s.answering === id) s.answering = null;
  }

  function openDeny() {
    const asked = currentQuestion();
    if (!asked || s.answering) return;
    s.denying = asked.request_id;
    ui.denyForm.hidden = false;
    ui.denyReason.focus();
  }

  function sendDeny() {
    const asked = currentQuestion();
    if (!asked || s.denying !== asked.request_id) return;
    answerQuestion("deny", ui.denyReason.value.trim());
  }


  function restoreInput(text) {
    if (!text) return;
    const draft = ui.input.value;
    ui.input.value = draft.trim() ? `${text}\n\n${draft}` : text;
    fitInput();
    renderSend();
    ui.input.focus();
    ui.input.setSelectionRange(text.length, text.length);
  }

  function fitInput() {
    ui.input.style.height = "auto";
    ui.input.style.height = `${ui.input.scrollHeight + 2}px`;
  }

  // Idle: starts a run. Busy: queued as `mode`. What was typed comes back on failure.
  async function sendText(text, mode) {
    const body = busy() ? { text, deliver_as: mode } : { text };
    try {
      try {
        await api("POST", sessionPath(s.id, "/messages"), body);
      } catch (err) {
        if (err.status !== 429 || body.deliver_as) throw err;
        // The run started since this page last heard: queue it instead.
        await api("POST", sessionPath(s.id, "/messages"), { text, deliver_as: mode });
      }
      return true;
    } catch (err) {
      restoreInput(text);
      showBanner(`Not sent: ${err.message}`);
      return false;
    }
  }

  async function submit(mode) {
    if (!canSend()) return;
    if (!s.id || s.creating) {
      // No session yet: the first send opens one, then goes to it (what was typed
      // meanwhile goes too). One is being started (+ New session): the send goes to
      // it, not to the session shown until then.
      s.starting = true;
      renderSend();
      let started = false;
      try {
        started = await newSession();
      } finally {
        s.starting = false;
        renderSend();
      }
      if (!started || !canSend()) return;
    }
    const text = ui.input.value;
    ui.input.value = "";
    fitInput();
    renderSend();
    if (!busy()) s.runStartedAt = Date.now();
    await sendText(text, mode);
  }

  async function stop() {
    if (!s.id || !busy() || s.stopping) return;
    s.stopping = true;
    ui.stop.disabled = true;
    ui.stop.textContent = "Stopping…";
    try {
      await api("POST", sessionPath(s.id, "/abort"));
    } catch (err) {
      showBanner(`Could not stop the run: ${err.message}`);
    } finally {
      s.stopping = false;
      ui.stop.textContent = "■ Stop";
      ui.stop.disabled = !busy();
    }
  }

  // ---- wiring ------------------------------------------------------------------------

  ui.input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.isComposing) {
      if (ev.shiftKey) return; // a new line
      ev.preventDefault();
      submit(ev.altKey || ev.ctrlKey || ev.metaKey ? "follow_up" : "steer");
    } else if (ev.key === "ArrowUp" && ev.altKey) {
      ev.preventDefault();
      queueToEditor();
    }
  });
  ui.input.addEventListener("input", () => {
    fitInput();
    renderSend();
  });
  ui.composer.addEventListener("submit", (ev) => {
    ev.preventDefault();
    submit("steer");
  });
  ui.stop.addEventListener("click", stop);
  for (const b of ui.answerButtons) b.addEventListener("click", () => answerQuestion(b.dataset.decision));
  ui.answerDeny.addEventListener("click", openDeny);
  ui.denySend.addEventListener("click", sendDeny);
  // In the reason field (opened by Deny: the answer is chosen already), Enter sends it.
  ui.denyReason.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.isComposing) {
      ev.preventDefault();
      sendDeny();
    } else if (ev.key === "Escape") {
      ev.preventDefault();
      s.denying = null;
      ui.denyForm.hidden = true;
    }
  });
  ui.newSession.addEventListener("click", newSession);
  ui.queueToEditor.addEventListener("click", queueToEditor);
  ui.jump.addEventListener("click", scrollToEnd);
  ui.transcript.addEventListener("scroll", () => { if (atBottom()) ui.jump.hidden = true; });

  function closeDrawer() {
    ui.app.classList.remove("drawer-open");
    ui.sidebarToggle.setAttribute("aria-expanded", "false");
  }
  ui.sidebarToggle.addEventListener("click", () => {
    const open = ui.app.classList.toggle("drawer-open");
    ui.sidebarToggle.setAttribute("aria-expanded", String(open));
  });
  ui.scrim.hidden = false;
  ui.scrim.addEventListener("click", closeDrawer);

  async function start() {
    setRunState("none");
    ui.state.textContent = "no session";
    await loadSessions();
    const wanted = decodeURIComponent(location.hash.slice(1));
    const pick = s.sessions.find((x) => x.id === wanted) || s.sessions.find((x) => x.open);
    if (pick) await openSession(pick);
    // Busy dots of other sessions stay current.
    setInterval(() => { if (document.visibilityState === "visible") loadSessions(); }, 5000);
  }

  // For tests and the curious: what the page holds.
  function replayFrom(seq) {
    if (!s.id) return;
    if (s.source) s.source.close();
    openStream(seq);
  }

  window.inkPage = { state: s, main, agents: agents.agents, selectSession, loadSessions, replayFrom };
  start();
})();
