"""The app as its helpers see it: what the slash commands and the app's glue may use.

`InkApp` composes helpers (`CommandRunner`, `AppStart`, `AppExtensions`,
`SessionActions`, `CtrlCPolicy`) that act on the app. They are typed against these
protocols, never against `InkApp` itself, so imports point one way: the app imports its
helpers, and no helper imports the app.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.geometry import Size
    from textual.screen import Screen
    from textual.theme import Theme
    from textual.widget import Widget
    from textual.worker import Worker

    from ink_tui.control.bus import EventBus
    from ink_tui.control.controller import RunController
    from ink_tui.extensions.host import ExtensionHost
    from ink_tui.session.config import Config
    from ink_tui.session.summary import SessionSummary
    from ink_tui.ui.session_binding import SessionBinding
    from ink_tui.ui.startup import AppSessions, SessionPlan
    from ink_tui.ui.widgets.prompt_input import PromptInput

WidgetT = TypeVar("WidgetT", bound="Widget")


class SessionMenu(Protocol):
    """Listing, picking and resuming saved sessions (`SessionActions`)."""

    def resume(self, path: Path) -> None: ...

    def listed(self, then: Callable[[list[SessionSummary]], None]) -> None: ...

    def pick(self) -> None: ...


class ExtensionStarter(Protocol):
    """Loading the extensions once the controller exists (`AppExtensions`)."""

    def start(self, controller: RunController) -> None: ...


class AppHost(Protocol):
    # Built after the first frame: None until then (and `binding` stays None for
    # --no-session).
    controller: RunController | None
    binding: SessionBinding | None
    sessions: AppSessions | None
    config: Config | None
    workspace: Path
    session_root: Path | None

    @property
    def session_actions(self) -> SessionMenu: ...

    @property
    def extension_host(self) -> ExtensionHost | None: ...

    @property
    def prompt(self) -> PromptInput: ...

    @property
    def screen(self) -> Screen[object]: ...

    def quit_app(self, code: int = 0) -> None: ...

    # What Textual's App offers that the helpers use.

    def query_one(self, selector: type[WidgetT]) -> WidgetT: ...

    def push_screen(
        self, screen: Screen[Any], callback: Callable[[Any], None] | None = None
    ) -> Any: ...

    def run_worker(
        self,
        work: Any,
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[Any]: ...

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...

    def copy_to_clipboard(self, text: str) -> None: ...


class StartHost(AppHost, Protocol):
    """What `AppStart` also uses: it builds the controller and opens the session."""

    bus: EventBus
    plan: SessionPlan
    # Configuration problems, shown once the transcript can take notices.
    config_notices: list[str]

    @property
    def extensions(self) -> ExtensionStarter: ...

    @property
    def current_theme(self) -> Theme: ...

    @property
    def size(self) -> Size: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any) -> bool: ...

    def mount_run_widgets(self) -> None: ...
