from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandList, CommandPalette, DiscoveryHit, Hit
from textual.pilot import Pilot

from ink_tui.ui.command_palette import SlashCommandProvider, palette_text
from ink_tui.ui.file_completion import FileIndex
from ink_tui.ui.input_history import InputHistory
from ink_tui.ui.slash_commands import COMMANDS, RunSlashCommand
from ink_tui.ui.widgets.completion_menu import CompletionMenu
from ink_tui.ui.widgets.prompt_input import PromptInput


class Host(App[None]):
    """Stands in for InkApp: Escape bound on the App, the menu right above the input."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "escape", "Escape")]
    COMMANDS: ClassVar = {SlashCommandProvider}

    def __init__(self, workspace: Path | None = None, history: InputHistory | None = None):
        super().__init__()
        self.index = FileIndex(workspace) if workspace is not None else None
        self.history = history
        self.submitted: list[str] = []
        self.escapes = 0
        self.commands: list[tuple[str, str]] = []

    def compose(self) -> ComposeResult:
        prompt = PromptInput(input_history=self.history)
        yield CompletionMenu(prompt, self.index)
        yield prompt

    def on_mount(self) -> None:
        self.prompt.focus()

    @property
    def prompt(self) -> PromptInput:
        return self.query_one(PromptInput)

    @property
    def menu(self) -> CompletionMenu:
        return self.query_one(CompletionMenu)

    def labels(self) -> list[str]:
        return [candidate.label for candidate in self.menu.candidates]

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        self.submitted.append(message.text)

    def on_run_slash_command(self, message: RunSlashCommand) -> None:
        self.commands.append((message.name, message.argument))

    def action_escape(self) -> None:
        self.escapes += 1


async def type_text(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*text)


async def wait_until(pilot: Pilot[None], predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + 5.0
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


ALL = [f"/{command.name}" for command in COMMANDS]


# -- slash commands --------------------------------------------------------------------


async def test_slash_at_the_start_shows_every_command() -> None:
    app = Host()
    async with app.run_test() as pilot:
        assert not app.menu.is_open
        assert not app.menu.display
        await type_text(pilot, "/")
        assert app.menu.is_open
        assert app.menu.display
        assert app.labels() == ALL
        assert app.menu.highlighted_candidate is not None
        assert app.menu.highlighted_candidate.label == "/help"
        # It is drawn above the input box.
        assert app.menu.region.bottom <= app.prompt.region.y


async def test_a_slash_later_in_the_text_opens_nothing() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "a /")
        assert not app.menu.is_open
        app.prompt.load_text("")
        await type_text(pilot, " /")  # a leading space means a literal slash
        assert not app.menu.is_open


async def test_typing_filters_the_commands() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/mo")
        assert app.labels() == ["/model", "/modes"]
        await type_text(pilot, "x")
        assert not app.menu.is_open
        await pilot.press("backspace")
        assert app.labels() == ["/model", "/modes"]


async def test_down_and_tab_insert_the_command() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/mo")
        await pilot.press("down", "tab")
        assert app.prompt.text == "/modes "
        assert app.prompt.cursor_location == (0, len("/modes "))
        assert not app.menu.is_open
        assert app.prompt.has_focus  # Tab did not move the focus either
        assert app.submitted == []


async def test_up_wraps_to_the_last_candidate() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/")
        await pilot.press("up")
        assert app.menu.highlighted_candidate is not None
        assert app.menu.highlighted_candidate.label == "/quit"
        assert app.prompt.text == "/"  # not a history walk


async def test_escape_closes_the_menu_and_not_the_apps_escape() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/mo")
        await pilot.press("escape")
        assert not app.menu.is_open
        assert app.prompt.text == "/mo"
        assert app.escapes == 0
        # Closed, Escape is the App's again.
        await pilot.press("escape")
        assert app.escapes == 1
        # Typing on reopens it.
        await type_text(pilot, "d")
        assert app.labels() == ["/model", "/modes"]


async def test_enter_accepts_then_a_second_enter_submits() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/he")
        await pilot.press("enter")
        assert app.submitted == []
        assert app.prompt.text == "/help "
        assert not app.menu.is_open
        await pilot.press("enter")
        assert app.submitted == ["/help "]


async def test_enter_without_candidates_submits() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/nope")
        assert not app.menu.is_open
        await pilot.press("enter")
        assert app.submitted == ["/nope"]


async def test_moving_the_cursor_out_of_the_token_closes_the_menu() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/mo")
        await pilot.press("left")  # still inside: "/m" filters wider
        assert app.labels() == ["/model", "/modes"]
        await pilot.press("left", "left")  # before the slash
        assert not app.menu.is_open
        await pilot.press("right")  # moving back does not reopen it
        assert not app.menu.is_open


async def test_accepting_keeps_the_argument_after_the_name() -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.prompt.load_text("/m gpt-4o")
        app.prompt.move_cursor((0, 2))
        await type_text(pilot, "o")
        assert app.labels() == ["/model", "/modes"]
        await pilot.press("tab")
        assert app.prompt.text == "/model gpt-4o"
        assert app.prompt.cursor_location == (0, len("/model "))


async def test_a_recalled_command_does_not_open_the_menu() -> None:
    app = Host(history=InputHistory(["older", "/model"]))
    async with app.run_test() as pilot:
        await pilot.press("up")
        assert app.prompt.text == "/model"
        assert not app.menu.is_open
        await pilot.press("up")  # still walks the history
        assert app.prompt.text == "older"


async def test_clicking_a_row_accepts_it() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await type_text(pilot, "/mo")
        await pilot.click(CompletionMenu, offset=(3, 1))  # the second row: /modes
        assert app.prompt.text == "/modes "
        assert app.prompt.has_focus


# -- @ paths ---------------------------------------------------------------------------


def make_workspace(root: Path) -> Path:
    (root / "README.md").write_text("# hi\n")
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "core.py").write_text("x = 1\n")
    (root / ".gitignore").write_text("secret.txt\n")
    (root / "secret.txt").write_text("hidden\n")
    (root / "secrets.md").write_text("shown\n")
    return root


async def test_at_offers_workspace_files_and_tab_inserts_one(tmp_path: Path) -> None:
    app = Host(make_workspace(tmp_path))
    async with app.run_test() as pilot:
        await type_text(pilot, "read @REA")
        await wait_until(pilot, lambda: app.menu.is_open, "the file listing")
        assert app.labels()[0] == "README.md"
        await pilot.press("tab")
        assert app.prompt.text == "read @README.md "
        assert not app.menu.is_open


async def test_completion_in_a_later_line_of_a_crlf_text(tmp_path: Path) -> None:
    # Offsets count the document's own newline, here two characters.
    app = Host(make_workspace(tmp_path))
    async with app.run_test() as pilot:
        app.prompt.load_text("see\r\nand ")
        app.prompt.move_cursor(app.prompt.document.end)
        await type_text(pilot, "@REA")
        await wait_until(pilot, lambda: app.menu.is_open, "the file listing")
        assert app.labels() == ["README.md"]  # the whole fragment, not "RE"
        await pilot.press("tab")
        assert app.prompt.text == "see\r\nand @README.md "
        assert app.prompt.cursor_location == (1, len("and @README.md "))


async def test_gitignored_files_are_not_offered(tmp_path: Path) -> None:
    app = Host(make_workspace(tmp_path))
    async with app.run_test() as pilot:
        await type_text(pilot, "@secre")
        await wait_until(pilot, lambda: app.menu.is_open, "the file listing")
        assert app.labels() == ["secrets.md"]


async def test_a_folder_is_inserted_without_a_blank_and_completion_goes_on(
    tmp_path: Path,
) -> None:
    app = Host(make_workspace(tmp_path))
    async with app.run_test() as pilot:
        await type_text(pilot, "@sr")
        await wait_until(pilot, lambda: app.menu.is_open, "the file listing")
        first = app.menu.candidates[0]
        assert (first.label, first.detail) == ("src/", "folder")
        await pilot.press("enter")
        assert app.prompt.text == "@src/"
        assert app.labels() == ["src/pkg/", "src/pkg/core.py"]
        await pilot.press("down", "enter")
        assert app.prompt.text == "@src/pkg/core.py "
        assert app.submitted == []


async def test_an_at_inside_a_word_opens_nothing(tmp_path: Path) -> None:
    app = Host(make_workspace(tmp_path))
    async with app.run_test() as pilot:
        assert app.index is not None
        await app.index.refresh()
        await type_text(pilot, "me@REA")
        await pilot.pause(0.1)
        assert not app.menu.is_open


# -- the command palette ---------------------------------------------------------------


async def test_the_provider_offers_every_command() -> None:
    app = Host()
    async with app.run_test():
        provider = SlashCommandProvider(app.screen)
        discovered = [hit async for hit in provider.discover()]
        assert all(isinstance(hit, DiscoveryHit) for hit in discovered)
        assert [hit.text for hit in discovered] == [palette_text(c) for c in COMMANDS]
        assert palette_text(COMMANDS[0]) == "/help — Keys and commands"
        found = [hit async for hit in provider.search("/mod")]
        assert all(isinstance(hit, Hit) for hit in found)
        names = {hit.text.split(" ")[0] for hit in found if hit.text}
        assert {"/model", "/modes"} <= names
        assert "/quit" not in names
        assert len([hit async for hit in provider.search("/")]) == len(COMMANDS)


async def test_the_palette_shows_usage_brackets_literally() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        commands = app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count == len(COMMANDS), "discovery")
        shown = [str(commands.get_option_at_index(n).prompt) for n in range(len(COMMANDS))]
        resume = next(text for text in shown if text.startswith("/resume"))
        # One entry, one line: the arguments with the name, no help line under it.
        assert resume == "/resume [session id] — Resume a saved session"


async def test_choosing_a_command_in_the_palette_posts_run_slash_command() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await type_text(pilot, "clipboard")
        # The palette gathers hits in a worker; wait until one is listed.
        await wait_until(
            pilot,
            lambda: app.screen.query_one(CommandList).option_count > 0,
            "palette hits",
        )
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.commands), "RunSlashCommand")
        assert app.commands == [("copy", "")]
        assert app.submitted == []
