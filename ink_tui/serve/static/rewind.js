// ink serve: going back from the page (docs/serve.md, "Going back"). Each of the user's
// messages in the main transcript has a ↶ button: its entry id comes from the
// `user_message` event, or from the message when the session is drawn from its history.
// A click opens a dialog that asks the server what restoring the files would change
// (POST .../rewind/preview) and offers the three restores, or only the conversation when
// nothing changed the files since. After a rewind the text goes into the input box and a
// notice says what was restored, with an Undo when files were (POST .../rewind/undo; the
// notice goes once a run starts, as an undo then would also take back that run's
// changes). The transcript is drawn again from the server (the `rewound` event does
// that, for every page of the session). While a run goes, the buttons are disabled and
// say why: the server would refuse (409).
// Server text goes in through textContent only.
"use strict";

(() => {
  const IDLE_TITLE = "Rewind to here: restore the conversation, the code or both as they were before this message";
  const BUSY_TITLE = "A run is in progress: stop it (or wait for it to end) to rewind";
  const STATUS_MARKS = { added: "A", modified: "M", deleted: "D" };
  const RESTORED_WORDS = {
    both: "the code and the conversation", conversation: "the conversation", files: "the code",
  };

  // hooks: container (the main transcript), api(method, path, body), sessionPath(id,
  // rest), sessionId(), busy(), restoreInput(text), reload() (the session drawn again
  // from the server), noticeBefore (the element the notice goes above).
  function create(hooks) {
    const d = dialog();
    const n = notice();
    let open = null; // {entryId, sessionId} while the dialog is shown
    let going = false; // a rewind is on its way

    // The ↶ button on one user message (drawn already, in `hooks.container`).
    function mark(el, entryId) {
      if (!el || !entryId || el.querySelector(":scope > .rewind-button")) return;
      el.dataset.entryId = entryId;
      el.classList.add("has-rewind");
      const b = document.createElement("button");
      b.type = "button";
      b.className = "rewind-button";
      // The glyph is drawn by CSS: the message's own text stays its text alone.
      b.setAttribute("aria-label", "Rewind to here");
      b.addEventListener("click", (ev) => {
        ev.stopPropagation();
        ask(entryId, el);
      });
      el.append(b);
      drawButton(b);
    }

    // The message a `user_message` event just drew: the last one of the main transcript.
    function markLast(entryId) {
      const all = hooks.container.querySelectorAll(":scope > .msg-user");
      mark(all[all.length - 1], entryId);
    }

    // A session drawn from its history: one .msg-user per user message, in order.
    function markHistory(messages) {
      const users = messages.filter((m) => m.role === "user");
      const els = hooks.container.querySelectorAll(":scope > .msg-user");
      if (users.length !== els.length) return; // not drawn one for one: mark none wrongly
      users.forEach((m, i) => { if (typeof m.entry_id === "string") mark(els[i], m.entry_id); });
    }

    function drawButton(b) {
      const busy = hooks.busy();
      b.disabled = busy;
      b.title = busy ? BUSY_TITLE : IDLE_TITLE;
    }

    // The run state changed: the buttons follow it, and the dialog's restores too.
    function render() {
      for (const b of hooks.container.querySelectorAll(":scope > .msg-user > .rewind-button")) drawButton(b);
      if (open) drawChoices(open.preview);
      if (hooks.busy()) hideNotice();
    }

    // ---- the dialog --------------------------------------------------------------

    function dialog() {
      const el = document.createElement("dialog");
      el.className = "rewind-dialog";
      el.setAttribute("aria-labelledby", "rewind-title");
      const title = document.createElement("h2");
      title.id = "rewind-title";
      title.className = "rewind-title";
      title.textContent = "Rewind to this message?";
      const message = document.createElement("div");
      message.className = "rewind-message";
      const filesHead = document.createElement("div");
      filesHead.className = "rewind-files-head";
      const files = document.createElement("ul");
      files.className = "rewind-files";
      const note = document.createElement("div");
      note.className = "rewind-note";
      const problem = document.createElement("div");
      problem.className = "rewind-error";
      problem.setAttribute("role", "alert");
      problem.hidden = true;
      const buttons = document.createElement("div");
      buttons.className = "rewind-buttons";
      const choice = (restore, text, cls) => {
        const b = document.createElement("button");
        b.type = "button";
        b.className = `button ${cls}`;
        b.textContent = text;
        b.dataset.restore = restore;
        b.addEventListener("click", () => rewind(restore));
        return b;
      };
      const both = choice("both", "Restore code and conversation", "primary");
      const conversation = choice("conversation", "Restore conversation", "");
      const code = choice("files", "Restore code", "");
      const cancel = document.createElement("button");
      cancel.type = "button";
      cancel.className = "button";
      cancel.textContent = "Cancel";
      cancel.addEventListener("click", () => close());
      buttons.append(both, conversation, code, cancel);
      el.append(title, message, filesHead, files, note, problem, buttons);
      // Escape (the dialog's own cancel) closes it, unless a rewind is on its way.
      el.addEventListener("cancel", (ev) => {
        ev.preventDefault();
        if (!going) close();
      });
      el.addEventListener("close", () => { open = null; });
      document.body.append(el);
      return { el, message, filesHead, files, note, problem, both, conversation, code, cancel };
    }

    async function ask(entryId, el) {
      const sessionId = hooks.sessionId();
      if (!sessionId || hooks.busy() || going) return;
      open = { entryId, sessionId, preview: null };
      d.message.textContent = messageText(el);
      d.filesHead.textContent = "Looking at what changed since…";
      d.files.replaceChildren();
      d.note.textContent = "";
      d.problem.hidden = true;
      drawChoices(null);
      if (!d.el.open) d.el.showModal();
      d.cancel.focus();
      let preview;
      try {
        preview = await hooks.api("POST", hooks.sessionPath(sessionId, "/rewind/preview"), { entry_id: entryId });
      } catch (err) {
        if (open && open.entryId === entryId) {
          d.filesHead.textContent = "";
          showProblem(`Cannot rewind to this message: ${err.message}`);
        }
        return;
      }
      if (!open || open.entryId !== entryId || open.sessionId !== sessionId) return;
      open.preview = preview;
      drawPreview(preview);
      drawChoices(preview);
    }

    // The message as shown, without its badge (steer, follow-up).
    function messageText(el) {
      let text = "";
      for (const node of el.childNodes) if (node.nodeType === Node.TEXT_NODE) text += node.textContent;
      return text;
    }

    function drawPreview(preview) {
      d.message.textContent = preview.text || d.message.textContent;
      const files = Array.isArray(preview.files) ? preview.files : [];
      d.files.replaceChildren();
      if (!preview.checkpoint) {
        d.filesHead.textContent = "";
        d.note.textContent = "Nothing changed the files since this message: only the conversation goes back.";
        return;
      }
      d.filesHead.textContent = files.length
        ? `Restoring the code changes ${files.length} file${files.length === 1 ? "" : "s"}:`
        : "The files are as they were then: restoring the code changes nothing.";
      for (const f of files) d.files.append(fileRow(f));
      d.note.textContent = "A restore of the code can be undone.";
    }

    function fileRow(f) {
      const li = document.createElement("li");
      li.className = `rewind-file status-${f.status}`;
      const mark = document.createElement("span");
      mark.className = "rewind-status";
      mark.textContent = STATUS_MARKS[f.status] || "?";
      mark.title = f.status;
      const path = document.createElement("span");
      path.className = "rewind-path";
      path.textContent = f.path;
      const added = document.createElement("span");
      added.className = "rewind-added";
      added.textContent = `+${f.added || 0}`;
      const removed = document.createElement("span");
      removed.className = "rewind-removed";
      removed.textContent = `-${f.removed || 0}`;
      li.append(mark, path, added, removed);
      return li;
    }

    // The restores offered: none until the preview is in, only the conversation when no
    // checkpoint follows the message; all disabled while a run goes or a rewind is sent.
    function drawChoices(preview) {
      const files = !!(preview && preview.checkpoint);
      d.both.hidden = !files;
      d.code.hidden = !files;
      const off = !preview || going || hooks.busy();
      for (const b of [d.both, d.conversation, d.code]) {
        b.disabled = off;
        b.title = hooks.busy() ? BUSY_TITLE : "";
      }
    }

    function showProblem(text) {
      d.problem.textContent = text;
      d.problem.hidden = false;
    }

    function close() {
      open = null;
      if (d.el.open) d.el.close();
    }

    // ---- the notice after a rewind -------------------------------------------------

    function notice() {
      const el = document.createElement("div");
      el.className = "rewind-notice";
      el.setAttribute("role", "status");
      el.hidden = true;
      const text = document.createElement("span");
      text.className = "rewind-notice-text";
      const undo = document.createElement("button");
      undo.type = "button";
      undo.className = "button small";
      undo.textContent = "Undo code restore";
      undo.title = "Put the files back as they were just before this rewind (the conversation stays)";
      undo.addEventListener("click", () => undoFiles());
      const dismiss = document.createElement("button");
      dismiss.type = "button";
      dismiss.className = "link-button rewind-dismiss";
      dismiss.textContent = "✕";
      dismiss.title = "Dismiss";
      dismiss.setAttribute("aria-label", "Dismiss");
      dismiss.addEventListener("click", () => hideNotice());
      el.append(text, undo, dismiss);
      hooks.noticeBefore.before(el);
      return { el, text, undo, sessionId: null };
    }

    function showNotice(text, sessionId, undoable) {
      n.text.textContent = text;
      n.sessionId = sessionId;
      n.undo.hidden = !undoable;
      n.undo.disabled = false;
      n.el.hidden = false;
    }

    function hideNotice() {
      n.el.hidden = true;
      n.sessionId = null;
    }

    async function undoFiles() {
      const sessionId = n.sessionId;
      if (!sessionId || hooks.busy() || hooks.sessionId() !== sessionId) return;
      n.undo.disabled = true;
      let done;
      try {
        done = await hooks.api("POST", hooks.sessionPath(sessionId, "/rewind/undo"));
      } catch (err) {
        n.undo.disabled = false;
        n.text.textContent = `Not undone: ${err.message}`;
        return;
      }
      const count = (done.restored_files || []).length;
      showNotice(`Undone: ${count} file${count === 1 ? "" : "s"} back as they were before the rewind.`, sessionId, false);
    }

    async function rewind(restore) {
      if (!open || !open.preview || going || hooks.busy()) return;
      const { entryId, sessionId } = open;
      going = true;
      drawChoices(open.preview);
      d.problem.hidden = true;
      let done;
      try {
        done = await hooks.api("POST", hooks.sessionPath(sessionId, "/rewind"), { entry_id: entryId, restore });
      } catch (err) {
        going = false;
        if (open) drawChoices(open.preview);
        showProblem(`Not rewound: ${err.message}`);
        return;
      }
      going = false;
      close();
      hideNotice();
      if (hooks.sessionId() !== sessionId) return;
      // The rewound event draws the transcript again; this page may not hear it (its
      // stream down), so it asks too.
      hooks.reload();
      if (restore !== "files") hooks.restoreInput(done.text || "");
      const count = (done.restored_files || []).length;
      const files = restore === "conversation" ? ""
        : ` (${count} file${count === 1 ? "" : "s"} restored)`;
      showNotice(`Rewound ${RESTORED_WORDS[restore]} to before “${short(done.text || "")}”${files}.`, sessionId, count > 0);
    }

    function short(text) {
      const line = text.split("\n")[0];
      return line.length > 60 ? `${line.slice(0, 59)}…` : line;
    }

    // Another session shown: neither the dialog nor the notice is about it.
    function leave() {
      close();
      hideNotice();
    }

    return { mark, markLast, markHistory, render, leave, dialog: d.el };
  }

  window.InkRewind = { create };
})();
