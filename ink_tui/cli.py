"""The `ink` command: parse flags, pick a front end, run it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ink_tui import __version__

if TYPE_CHECKING:
    from ink_tui.extensions.startup import ExtensionOptions
    from ink_tui.session.config import Config


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ink",
        description=(
            "A terminal coding agent you stay in charge of: watch it work, steer it, queue "
            "follow-ups, interrupt it. With no model configured it runs an offline demo."
        ),
    )
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        nargs="?",
        const="",
        default=None,
        metavar="PROMPT",
        help="answer one prompt and exit (the prompt may also come on stdin)",
    )
    parser.add_argument("--base-url", help="OpenAI-compatible API base URL (env INK_BASE_URL)")
    parser.add_argument("--model", help="model name (env INK_MODEL)")
    parser.add_argument(
        "--api-key", help="API key (env INK_API_KEY or OPENAI_API_KEY; prefer the environment)"
    )
    parser.add_argument(
        "-C", "--workspace", type=Path, default=None, help="work in this folder (default: .)"
    )
    parser.add_argument(
        "--max-iterations", type=int, default=None, help="rounds of tool calls per run"
    )
    parser.add_argument(
        "--steering-mode", choices=["all", "one-at-a-time"], default=None, help="default: all"
    )
    parser.add_argument(
        "--follow-up-mode",
        choices=["all", "one-at-a-time"],
        default=None,
        help="default: one-at-a-time",
    )
    parser.add_argument(
        "--no-checkpoints",
        dest="checkpoints",
        action="store_const",
        const="off",
        default=None,
        help="take no checkpoints of the files (a rewind then restores only the conversation)",
    )
    parser.add_argument(
        "--approval",
        choices=["ask", "edits", "auto"],
        default=None,
        help=(
            "ask before bash/write/edit (ask, the default), only before bash and writes "
            "outside the workspace or into protected places (edits), or never (auto); "
            "print mode refuses what would ask"
        ),
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help=(
            "apply this folder's .ink/config.toml in full without it being trusted (this "
            "run only): its approval policy and rules, pass_env and providers"
        ),
    )
    sessions = parser.add_argument_group("sessions")
    sessions.add_argument(
        "-c",
        "--continue",
        dest="continue_",
        action="store_true",
        help="resume the session of this workspace used last",
    )
    sessions.add_argument(
        "-r",
        "--resume",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="resume a session by id prefix (no id: pick from a list)",
    )
    sessions.add_argument(
        "--no-session", action="store_true", help="write nothing to disk for this session"
    )
    extensions = parser.add_argument_group("extensions")
    extensions.add_argument(
        "--trust-extensions",
        action="store_true",
        help="load this folder's .ink/extensions without asking (this run only)",
    )
    extensions.add_argument(
        "--no-extensions", action="store_true", help="load no extensions at all"
    )
    parser.add_argument(
        "--mode",
        choices=["tui", "rpc"],
        default="tui",
        help="rpc: JSON lines on stdin/stdout for programs (see docs/rpc.md)",
    )
    parser.add_argument(
        "--rpc-dialect",
        choices=["ink", "pi"],
        default="ink",
        help="with --mode rpc: pi speaks pi's RPC protocol, for pi's clients (docs/rpc.md)",
    )
    parser.add_argument("--version", action="store_true", help="print the version and fast paths")
    return parser


# The flags a program-driven session takes from the command line (RPC mode).
_SESSION_FLAGS = (
    "model",
    "base_url",
    "api_key",
    "max_iterations",
    "steering_mode",
    "follow_up_mode",
    "approval",
    "checkpoints",
)


def _config_command(argv: Sequence[str]) -> int:
    """`ink config`: print the effective settings and where each came from."""
    parser = argparse.ArgumentParser(prog="ink config", description=_config_command.__doc__)
    parser.add_argument("-C", "--workspace", type=Path, default=None)
    args = parser.parse_args(argv)
    from ink_tui.session.config import load_config
    from ink_tui.session.config_report import render_report

    workspace = (args.workspace or Path.cwd()).expanduser().resolve()
    print(render_report(load_config(workspace)))
    return 0


def _print_model_errors(config: Config) -> None:
    from ink_tui.session.model_errors import render_model_errors

    for problem in config.problems:
        if problem not in config.model_errors:
            print(f"ink: {problem}", file=sys.stderr)
    for line in render_model_errors(config):
        print(f"ink: {line}", file=sys.stderr)


def _read_prompt(flag_prompt: str) -> str:
    piped = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    parts = [part for part in (flag_prompt.strip(), piped.strip()) if part]
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    return _main(list(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    if argv[:1] == ["config"]:
        return _config_command(argv[1:])
    if argv[:1] == ["serve"]:
        from ink_tui.serve.main import main as serve_main

        return serve_main(argv[1:])
    acp = argv[:1] == ["acp"]
    if acp:
        argv = argv[1:]
    args = build_parser().parse_args(argv)
    if args.version:
        from ink_tui import fastpaths

        print("\n".join([f"ink {__version__}", *fastpaths.report_lines()]))
        return 0
    workspace = (args.workspace or Path.cwd()).expanduser().resolve()
    if not workspace.is_dir():
        print(f"ink: workspace {workspace} is not a folder", file=sys.stderr)
        return 2

    if acp:
        # `ink acp`: an Agent Client Protocol agent on stdio, for editors (docs/acp.md).
        from ink_tui.modes.acp_mode import main as acp_main

        flags = {name: getattr(args, name) for name in _SESSION_FLAGS}
        flags["extensions"] = not args.no_extensions
        flags["trust_extensions"] = args.trust_extensions
        flags["trust_project"] = args.trust_project
        return acp_main(workspace, flags, record=not args.no_session)

    if args.mode == "rpc":
        from ink_tui.modes.rpc_mode import main as rpc_main

        if args.resume == "":
            print("ink: --mode rpc cannot show a picker: give -r ID", file=sys.stderr)
            return 2

        flags = {name: getattr(args, name) for name in _SESSION_FLAGS}
        flags["extensions"] = not args.no_extensions
        flags["trust_extensions"] = args.trust_extensions
        flags["trust_project"] = args.trust_project
        return rpc_main(
            workspace,
            flags,
            resume=args.resume or None,
            continue_=args.continue_,
            record=not args.no_session,
            dialect=args.rpc_dialect,
        )

    if args.prompt is not None:
        return _run(args, workspace)
    # The full-screen app collects no garbage while it starts (gc_policy says why); the
    # app turns collection back on right after its first frame, and this block at the
    # latest.
    from ink_tui.fastpaths import gc_policy

    gc_policy.own_process()
    with gc_policy.startup_pause():
        return _run(args, workspace)


def _run(args: argparse.Namespace, workspace: Path) -> int:
    """A model's front end: print mode (`-p`) or the full-screen app."""
    from ink_tui.session.config import load_config

    config = load_config(workspace, flags=vars(args))
    if args.prompt is None and config.held_back is not None:
        config = _ask_trust_project(config, workspace, args)
    if config.model_errors:
        from ink_tui.session.model_errors import EXIT_MODEL_UNUSABLE

        # Not the demo in its place: its answers would pass for the configured model's.
        _print_model_errors(config)
        return EXIT_MODEL_UNUSABLE
    model = config.model_config()

    if args.prompt is not None:
        prompt = _read_prompt(args.prompt)
        if not prompt:
            print("ink: no prompt: give one after -p or on stdin", file=sys.stderr)
            return 2
        for problem in config.problems:
            print(f"ink: {problem}", file=sys.stderr)
        from ink_tui.modes.print_session import run_print_session

        # Print runs are sessions too, so `ink -c` can pick up where one left off.
        return run_print_session(
            model,
            workspace,
            prompt,
            settings=config.run_settings(),
            user_config_dir=config.user_config_dir,
            continue_=args.continue_,
            resume=args.resume,
            record=not args.no_session,
            extensions=_extension_options(args, config),
        )

    from ink_tui.ui.startup import SessionPlan, plan_session

    plan: SessionPlan | str = plan_session(
        workspace,
        continue_=args.continue_,
        resume=args.resume,
        enabled=not args.no_session,
    )
    if isinstance(plan, str):
        print(f"ink: {plan}", file=sys.stderr)
        return 2
    from ink_tui.ui.run_app import run_app

    return run_app(config, workspace, plan, extensions=partial(_extension_options, args, config))


def _ask_trust_project(config: Config, workspace: Path, args: argparse.Namespace) -> Config:
    """The TUI asks whether to trust an untrusted .ink/config.toml before it starts; a
    yes is remembered and the file then applies in full."""
    from ink_tui.session.config import load_config
    from ink_tui.session.project_trust import trust_file_now
    from ink_tui.ui.screens.trust_project import ask_trust_project

    held = config.held_back
    if held is None or not ask_trust_project(held):
        return config
    try:
        trust_file_now(held.path, digest=held.digest)
    except OSError as error:
        trusted = load_config(workspace, flags=vars(args), trust_project=True)
        trusted.problems.append(f"Could not remember trusting {held.path}: {error}")
        return trusted
    return load_config(workspace, flags=vars(args))


def _extension_options(args: argparse.Namespace, config: Config) -> ExtensionOptions:
    from ink_tui.extensions.startup import ExtensionOptions

    return ExtensionOptions(
        enabled=not args.no_extensions,
        trust_project=args.trust_extensions,
        config_dir=config.user_config_dir,
    )
