"""The `ink` command: parse flags, pick a front end, run it."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from ink_tui import __version__


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
    parser.add_argument("--version", action="version", version=f"ink {__version__}")
    return parser


def _read_prompt(flag_prompt: str) -> str:
    piped = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    parts = [part for part in (flag_prompt.strip(), piped.strip()) if part]
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    workspace = (args.workspace or Path.cwd()).expanduser().resolve()
    if not workspace.is_dir():
        print(f"ink: workspace {workspace} is not a folder", file=sys.stderr)
        return 2

    from ink_tui.control.run_settings import RunSettings
    from ink_tui.session.model_config import resolve_model_config

    config = resolve_model_config(base_url=args.base_url, model=args.model, api_key=args.api_key)
    settings = RunSettings()
    if args.max_iterations is not None:
        settings.loop.max_iterations = max(1, args.max_iterations)
    if args.steering_mode:
        settings.steering_mode = args.steering_mode
    if args.follow_up_mode:
        settings.follow_up_mode = args.follow_up_mode

    if args.prompt is not None:
        prompt = _read_prompt(args.prompt)
        if not prompt:
            print("ink: no prompt: give one after -p or on stdin", file=sys.stderr)
            return 2
        from ink_tui.assemble import assemble_controller
        from ink_tui.modes.print_mode import run_print

        async def run() -> int:
            controller = assemble_controller(config, workspace, settings=settings)
            return await run_print(controller, prompt)

        return asyncio.run(run())

    from ink_tui.ui.app import run_app

    return run_app(config, workspace, settings)
