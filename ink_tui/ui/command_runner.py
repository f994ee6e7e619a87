"""What each slash command does. The app parses and routes; this file acts.

Commands that change the conversation (/new, /resume) wait for an idle moment; /model
and /modes apply from the next run, since a run reads its provider and modes once.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from ink_tui.control.input_queue import TAKE_MODES
from ink_tui.core.choices import one_of
from ink_tui.core.events import JobView, NoticeLevel
from ink_tui.core.messages import AssistantMessage
from ink_tui.core.sentence import sentence
from ink_tui.ui.model_label import model_label
from ink_tui.ui.slash_commands import find_command
from ink_tui.ui.widgets.status_bar import StatusBar
from ink_tui.ui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from ink_tui.session.summary import SessionSummary
    from ink_tui.tools.jobs import JobTable
    from ink_tui.ui.app_host import AppHost
    from ink_tui.ui.rewind_actions import RewindActions

MODE_ROWS = [
    ("steer:all", "Steering: all at once", "every queued steer joins the next request"),
    ("steer:one-at-a-time", "Steering: one at a time", "one steer per request"),
    ("follow_up:one-at-a-time", "Follow-ups: one at a time", "each answered before the next"),
    ("follow_up:all", "Follow-ups: all at once", "every queued follow-up together"),
]


class CommandRunner:
    def __init__(self, app: AppHost) -> None:
        self.app = app
        self._rewind: RewindActions | None = None

    @property
    def rewind(self) -> RewindActions:
        """/rewind, /tree, /fork and Esc Esc (made when first used)."""
        if self._rewind is None:
            from ink_tui.ui.rewind_actions import RewindActions

            self._rewind = RewindActions(self.app)
        return self._rewind

    @property
    def transcript(self) -> Transcript:
        return self.app.query_one(Transcript)

    def say(self, text: str, level: NoticeLevel = "info") -> None:
        self.transcript.add_notice(text, level)

    def run(self, name: str, argument: str = "") -> None:
        host = self.app.extension_host
        if host is not None and find_command(name) is None and host.run_command(name, argument):
            return  # an extension's command; ink's own names are never an extension's
        handler = getattr(self, f"do_{name}", None)
        if handler is None:
            self.say(f"/{name} is not available here.", "warning")
            return
        handler(argument)

    def _busy(self, what: str) -> bool:
        controller = self.app.controller
        if controller is not None and controller.state == "running":
            self.say(f"{what} waits for an idle moment: interrupt the run or let it finish.")
            return True
        return False

    # -- the commands ------------------------------------------------------------------

    # What a command needs (screens, the session store, providers) is imported when it
    # runs: the App imports this module before its first frame, which needs none of it.

    def do_help(self, _: str) -> None:
        from ink_tui.ui.screens.help_screen import HelpScreen

        self.app.push_screen(HelpScreen())

    def do_quit(self, _: str) -> None:
        self.app.quit_app(0)

    def do_clear(self, _: str) -> None:
        self.transcript.clear_view()

    def do_new(self, _: str) -> None:
        if not self._busy("/new") and self.app.sessions is not None:
            self.app.sessions.new()

    def do_resume(self, argument: str) -> None:
        if self._busy("/resume") or self.app.sessions is None:
            return
        if not argument:
            self.app.session_actions.pick()
            return
        from ink_tui.session.catalog import SessionLookupError, find_session

        try:
            summary = find_session(self.app.workspace, argument, self.app.session_root)
        except SessionLookupError as error:
            self.say(str(error), "error")
            return
        self.app.session_actions.resume(summary.path)

    def do_rewind(self, _: str) -> None:
        self.rewind.open_picker("rewind")

    def do_tree(self, _: str) -> None:
        self.rewind.open_tree()

    def do_fork(self, _: str) -> None:
        self.rewind.open_picker("fork")

    def do_sessions(self, _: str) -> None:
        self.app.session_actions.listed(self._show_sessions)

    def _show_sessions(self, sessions: list[SessionSummary]) -> None:
        if not sessions:
            self.say("No saved sessions in this workspace yet.")
            return
        lines = [f"Sessions in this workspace ({len(sessions)}), newest first:"]
        for s in sessions[:20]:
            first = s.first_prompt.strip().splitlines()[0] if s.first_prompt.strip() else ""
            started = s.started.astimezone().strftime("%Y-%m-%d %H:%M")
            lines.append(f"  {s.id}  {started}  {s.message_count:>3} msgs  {first[:60]}")
        lines.append("Resume one with /resume ID (a prefix is enough) or pick with /resume.")
        self.say("\n".join(lines))

    def do_context(self, _: str) -> None:
        from ink_tui.session.context_files import find_context_files, render_context_report

        config_dir = self.app.config.user_config_dir if self.app.config else None
        files = find_context_files(self.app.workspace, config_dir)
        self.say(render_context_report(files, self.app.workspace))

    def do_compact(self, argument: str) -> None:
        controller = self.app.controller
        if controller is None:
            return
        if controller.state == "running":
            # Compaction changes the history the run is using: it waits for idle.
            self.say(
                "/compact waits for an idle moment: interrupt the run or let it finish "
                "(a long run compacts by itself when the context fills up)."
            )
            self.app.prompt.restore(f"/compact {argument}".rstrip())
            return
        controller.compact(argument)

    def do_copy(self, _: str) -> None:
        controller = self.app.controller
        history = controller.history if controller is not None else []
        answer = next(
            (m.text for m in reversed(history) if isinstance(m, AssistantMessage) and m.text),
            None,
        )
        if answer is None:
            self.say("There is no answer to copy yet.")
            return
        from ink_tui.ui.clipboard import copy_message, copy_text

        outcome = copy_text(answer, self.app.copy_to_clipboard)
        self.say(copy_message(f"the last answer ({len(answer)} characters)", outcome))

    def do_status(self, _: str) -> None:
        from ink_tui.ui.session_status import status_report

        self.say(status_report(self.app))

    def do_jobs(self, argument: str) -> None:
        words = argument.split(maxsplit=1)
        if not words:
            self.app.run_worker(self._list_jobs(), group="jobs", exit_on_error=False)
        elif words[0].lower() in ("kill", "stop"):
            rest = words[1] if len(words) > 1 else ""
            self.app.run_worker(self._stop_jobs(rest), group="jobs", exit_on_error=False)
        else:
            self.say(f"/jobs {argument}: {JOBS_USAGE}", "warning")
            # Give the text back so a typo costs nothing.
            self.app.prompt.restore(f"/jobs {argument}")

    async def _list_jobs(self) -> None:
        from ink_tui.control.jobs import list_jobs

        table = self._job_table()
        self.say(jobs_report(await list_jobs(table) if table is not None else []))

    async def _stop_jobs(self, which: str) -> None:
        from ink_tui.control.jobs import NO_JOBS_TO_STOP, stop_jobs

        table = self._job_table()
        self.say(await stop_jobs(table, which) if table is not None else NO_JOBS_TO_STOP)

    def _job_table(self) -> JobTable | None:
        """The session's jobs (none before the controller is built)."""
        controller = self.app.controller
        jobs = controller.jobs if controller is not None else None
        return jobs.table if jobs is not None else None

    def do_model(self, argument: str) -> None:
        config = self.app.config
        if config is None:
            self.say("No configuration loaded; start ink with --model to choose a model.")
            return
        if argument:
            self.switch_model(argument)
            return
        models = config.available_models()
        if not models:
            from ink_tui.session.config_files import display_path

            # The file the loader read ($XDG_CONFIG_HOME honoured), not a usual place.
            where = display_path(config.user_config_dir / "config.toml")
            self.say(
                "No models are configured. Add [providers.NAME] with base_url and models to "
                f"{where} (see `ink config`)."
            )
            return
        from ink_tui.ui.screens.list_picker import ListPicker

        rows = [(spec, spec, "") for spec in models]

        def chosen(spec: str | None) -> None:
            if spec:
                self.switch_model(spec)

        self.app.push_screen(ListPicker("Switch model", rows), chosen)

    def switch_model(self, spec: str) -> None:
        from ink_tui.assemble import make_provider
        from ink_tui.ui.widgets.transcript_pacing import NETWORK_GATHER_S

        config, controller = self.app.config, self.app.controller
        if config is None or controller is None:
            return
        choice = config.resolve_model(spec)
        model_config = choice.model_config()
        old = controller.provider
        controller.provider = make_provider(
            model_config, self.app.workspace, gather_s=NETWORK_GATHER_S
        )
        self.app.run_worker(old.aclose(), exit_on_error=False)
        label = model_label(model_config.base_url, model_config.model)
        self.app.query_one(StatusBar).set_model(label, model_config.is_demo)
        if self.app.binding is not None:
            self.app.binding.record_model_change(model_config.model or label)
        later = " from the next run" if controller.state == "running" else ""
        self.say(f"Model: {label}{later}.")

    def do_approval(self, argument: str) -> None:
        controller = self.app.controller
        if controller is None:
            return
        approvals = controller.approvals
        wanted = argument.strip().lower()
        if wanted:
            try:
                approvals.set_policy(wanted)
            except ValueError as error:
                self.say(sentence(str(error)), "warning")
                return
            self.say(
                f"Approval: {approvals.policy} (for this session; set [approval] policy "
                "in .ink/config.toml to keep it)."
            )
            return
        rules = [r.text for r in (*approvals.session_rules, *approvals.saved_rules)]
        allowed = ", ".join(rules) if rules else "none"
        self.say(
            f"Approval: {approvals.policy}. Rules that allow without asking: {allowed}. "
            "/approval ask|edits|auto changes it for this session."
        )

    def do_thinking(self, argument: str) -> None:
        from ink_tui.ui.thinking_setting import set_thinking

        controller = self.app.controller
        if controller is None:
            return
        message, level, worked = set_thinking(controller.provider, argument)
        self.say(message, level)
        if not worked and argument:
            self.app.prompt.restore(f"/thinking {argument}")  # a typo costs nothing

    def do_modes(self, _: str) -> None:
        controller = self.app.controller
        if controller is None:
            return
        from ink_tui.ui.screens.list_picker import ListPicker

        settings = controller.settings
        current = f"steer:{settings.steering_mode}"

        def chosen(key: str | None) -> None:
            if not key:
                return
            which, mode = key.split(":", 1)
            taken = one_of(mode, TAKE_MODES)
            if taken is None:
                return  # not a key of MODE_ROWS
            if which == "steer":
                settings.steering_mode = taken
            else:
                settings.follow_up_mode = taken
            self.say(
                f"Steering: {settings.steering_mode}; follow-ups: {settings.follow_up_mode} "
                "(from the next run)."
            )

        self.app.push_screen(ListPicker("Queue modes", MODE_ROWS, current), chosen)


JOBS_USAGE = "/jobs lists them; /jobs kill stops all, /jobs kill N (or a pid) one."


def jobs_report(jobs: list[JobView]) -> str:
    if not jobs:
        return "No background jobs: nothing a finished command started is still running."
    lines = [f"Background jobs ({len(jobs)}), left running by finished commands:"]
    for job in jobs:
        started = time.strftime("%H:%M:%S", time.localtime(job.started)) if job.started else "?"
        command = " ".join(job.command.split())
        if len(command) > 50:
            command = command[:49] + "…"
        call = job.call_id or "a bash call"
        lines.append(
            f"  #{job.number}  pid {job.pid}  {job.argv[:60] or '?'}  started {started}  "
            f"from {call}: {command}"
        )
    lines.append(f"{JOBS_USAGE} ink stops them all when it exits.")
    return "\n".join(lines)
