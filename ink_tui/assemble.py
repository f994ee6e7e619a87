"""Putting the layers together: provider + tools + controller, for any front end.

The one place that knows every layer; everything is imported lazily so that `ink --help`
and the first frame of the app do not pay for HTTP, tools or sessions.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ink_tui.control.bus import EventBus
    from ink_tui.control.controller import RunController, Spawn
    from ink_tui.control.run_settings import RunSettings
    from ink_tui.core.messages import Message
    from ink_tui.core.provider_api import Provider
    from ink_tui.session.model_config import ModelConfig


def make_provider(config: ModelConfig, workspace: Path, *, gather_s: float = 0.0) -> Provider:
    """`gather_s`: for a front end that draws at a frame rate, the stream is taken in
    batches of at least that long (`providers/body.py`); programs keep every event."""
    provider = _make_provider(config, workspace, gather_s)
    if config.context_window is not None:
        # `[context_windows]` wins over what the provider knows (core/context_window.py).
        # Not part of the Provider protocol: an optional attribute, read with getattr.
        provider.context_window = config.context_window  # type: ignore[attr-defined]
    return provider


def _make_provider(config: ModelConfig, workspace: Path, gather_s: float) -> Provider:
    if config.is_demo:
        from ink_tui.providers.demo import DemoProvider

        return DemoProvider(workspace)
    assert config.base_url is not None
    if config.kind == "anthropic":
        from ink_tui.providers.anthropic import AnthropicProvider

        return AnthropicProvider(
            config.base_url,
            config.model,
            config.api_key,
            timeouts=config.timeouts,
            thinking_budget=config.thinking_budget,
        )
    from ink_tui.providers.openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(
        config.base_url, config.model, config.api_key, timeouts=config.timeouts, gather_s=gather_s
    )


def _save_rule(workspace: Path, rule: str) -> None:
    from ink_tui.session.approval_file import add_allow_rule
    from ink_tui.session.config_files import workspace_config_path

    add_allow_rule(workspace_config_path(workspace), rule)


def assemble_controller(
    config: ModelConfig,
    workspace: Path,
    *,
    settings: RunSettings | None = None,
    spawn: Spawn | None = None,
    bus: EventBus | None = None,
    history: list[Message] | None = None,
    user_config_dir: Path | None = None,
    gather_s: float = 0.0,
) -> RunController:
    from ink_tui.control.controller import RunController
    from ink_tui.control.jobs import JobsWatcher
    from ink_tui.session.context_files import find_context_files
    from ink_tui.session.system_prompt import build_system_prompt
    from ink_tui.tools import default_tools
    from ink_tui.tools.jobs import JobTable
    from ink_tui.tools.output_files import prune_outputs
    from ink_tui.tools.task import TaskTool

    # This session's commands and what they leave running. Nothing process-wide is set
    # up here: the `ink` command installs its exit guard itself (tools/job_exit.py).
    jobs = JobTable()
    tools = default_tools(
        hide_env=settings.hide_env if settings else (),
        pass_env=settings.pass_env if settings else (),
        jobs=jobs,
    )
    if settings is None or settings.subagents_max_depth > 0:
        # Bound to the controller's sub-agents when it is made.
        tools.append(TaskTool())
    context_files = find_context_files(workspace, user_config_dir)
    controller = RunController(
        provider=make_provider(config, workspace, gather_s=gather_s),
        tools=tools,
        workspace=workspace,
        system_prompt=build_system_prompt(workspace, tools, context_files),
        settings=settings,
        spawn=spawn,
        bus=bus,
        history=history,
    )
    # A sub-agent's prompt lists the tools it has (no `task` at the deepest level).
    controller.subagents.system_prompt_for = partial(
        build_system_prompt, workspace, context_files=context_files
    )
    # "Always" answers become rules in the workspace's config file.
    controller.approvals.save_rule = partial(_save_rule, workspace)
    # Cut outputs' files: atexit removes them, but not on the way out through os._exit.
    controller.exit_hooks.append(prune_outputs)
    # /quit, a double Ctrl+C: what this session's commands left running goes too.
    controller.exit_hooks.append(jobs.stop_everything)
    controller.jobs = JobsWatcher(controller.bus, jobs)
    controller.bus.subscribe(controller.jobs)
    return controller
