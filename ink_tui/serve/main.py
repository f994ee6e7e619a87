"""`ink serve`: the agent over HTTP, for the browser page and for programs.

What it promises at the command line:

- Loopback by default (127.0.0.1:8765). A host that is not loopback is refused with
  exit status 2 and a message saying why, unless `--allow-remote` is given: anyone who
  reaches the port and learns the token can run commands in the workspace.
- One line on stdout once it listens: `ink serve: http://HOST:PORT/?token=TOKEN` (a
  fresh random token each start; `--port 0` picks a free port and the line says which).
  Warnings and logs go to stderr.
- The same model flags and config as `ink`; a configured model that cannot be used is
  refused at start (exit 2), never replaced by the demo.
- Served sessions ask before bash / write / edit like the TUI: `--approval ask|edits|auto`,
  by default the configured policy (`ask` unless one is set); clients answer the
  `approval_request` events (docs/serve.md).
- `--public-origin URL` (repeatable): an address a proxy in front serves the page at; its
  Host and Origin are accepted besides the loopback ones (`guard`).
- Ctrl+C, SIGTERM, SIGHUP (the terminal closed): requests refused, every run aborted
  and settled, every session's jobs stopped and its file closed (and its lock
  released), every event stream ended; then exit 130 / 143 / 129. A second one stops
  at once. An ignored one (`nohup`) stays ignored (`stopping`).
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

EXIT_USAGE = 2
DEFAULT_PORT = 8765

# The flags a served session takes from the command line (as RPC mode's).
SESSION_FLAGS = (
    "model",
    "base_url",
    "api_key",
    "max_iterations",
    "steering_mode",
    "follow_up_mode",
    "approval",
    "trust_project",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ink serve",
        description="Serve ink over HTTP: a browser page and a JSON + SSE API (docs/serve.md).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0 picks a free port")
    parser.add_argument("-C", "--workspace", type=Path, default=None, help="default: .")
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a host that is not loopback (anyone with the token can run commands)",
    )
    parser.add_argument(
        "--public-origin",
        action="append",
        default=[],
        metavar="URL",
        help="an address a proxy in front serves the page at (https://ink.example.com)",
    )
    parser.add_argument(
        "--show-tool-arguments",
        action="store_true",
        help=(
            "send tool arguments and results whole in events and history: bash commands, "
            "write/edit contents and diffs (secrets still masked; approval questions "
            "always show what they ask about)"
        ),
    )
    parser.add_argument(
        "--approval",
        choices=["ask", "edits", "auto"],
        default=None,
        help=(
            "ask before bash/write/edit (ask), only before bash and writes outside the "
            "workspace or into protected places (edits), or never (auto); default: the "
            "configured policy, ask unless set"
        ),
    )
    parser.add_argument(
        "--trust-project",
        action="store_true",
        help="apply this folder's .ink/config.toml in full without it being trusted",
    )
    parser.add_argument("--base-url", help="OpenAI-compatible API base URL (env INK_BASE_URL)")
    parser.add_argument("--model", help="model name (env INK_MODEL)")
    parser.add_argument("--api-key", help="API key (prefer the environment: INK_API_KEY)")
    parser.add_argument("--max-iterations", type=int, default=None)
    parser.add_argument("--steering-mode", choices=["all", "one-at-a-time"], default=None)
    parser.add_argument("--follow-up-mode", choices=["all", "one-at-a-time"], default=None)
    return parser


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    if not is_loopback(args.host) and not args.allow_remote:
        print(
            f"ink serve: refusing to listen on {args.host}, which is not a loopback address: "
            "anyone who can reach it and learns the token could run commands in your "
            "workspace. Add --allow-remote if that is what you want (and put TLS in front).",
            file=sys.stderr,
        )
        return EXIT_USAGE
    workspace = (args.workspace or Path.cwd()).expanduser().resolve()
    if not workspace.is_dir():
        print(f"ink serve: workspace {workspace} is not a folder", file=sys.stderr)
        return EXIT_USAGE
    from ink_tui.serve.guard import normal_origin

    for origin in args.public_origin:
        if normal_origin(origin) is None:
            print(
                f"ink serve: --public-origin {origin!r} is not an origin "
                "(scheme://host[:port], http or https, no path)",
                file=sys.stderr,
            )
            return EXIT_USAGE
    flags = {name: getattr(args, name) for name in SESSION_FLAGS}
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)

    from ink_tui.session.config import load_config
    from ink_tui.session.model_errors import EXIT_MODEL_UNUSABLE, render_model_errors

    config = load_config(workspace, flags={k: v for k, v in flags.items() if v is not None})
    if config.model_errors:
        for line in render_model_errors(config):
            print(f"ink serve: {line}", file=sys.stderr)
        return EXIT_MODEL_UNUSABLE
    if config.held_back is not None:
        print(f"ink serve: {config.held_back.message()}", file=sys.stderr)
    if flags["approval"] is None:
        # The person's policy: a served page asks as the TUI does (sessions would take
        # `auto`, a program's default, from a policy that is not a flag).
        flags["approval"] = str(config.value("approval.policy"))
    try:
        sock = _bind(args.host, args.port)
    except OSError as error:
        print(f"ink serve: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return EXIT_USAGE
    secrets = [*configured_keys(config), args.api_key]
    from ink_tui.tools.job_exit import guard_exit

    # The `ink` command's process-wide guards (subreaper, exit paths): its entry points
    # install them, the sessions it opens never do.
    guard_exit()
    from ink_tui import event_loop

    try:
        # uvloop where it is installed: the loop's own work is most of what a streamed
        # delta costs between the model's socket and the clients' (event_loop.py).
        return event_loop.run(
            serve(
                sock,
                workspace,
                flags,
                secrets,
                show_arguments=args.show_tool_arguments,
                allow_remote=args.allow_remote,
                public_origins=tuple(args.public_origin),
            )
        )
    except KeyboardInterrupt:
        # Ctrl+C before the server handles it (while it starts): no session is open yet.
        return 130


def http_implementation() -> Literal["httptools", "h11"]:
    """uvicorn's HTTP/1.1 on httptools (C) where that is installed, else on h11: the
    choice is named, not left to uvicorn's "auto", so a test can hold it to one."""
    import importlib.util

    return "httptools" if importlib.util.find_spec("httptools") is not None else "h11"


def configured_keys(config: Any) -> list[str]:
    """The API key in use and those of every configured provider (to be masked)."""
    keys = [config.model_config().api_key]
    for provider in config.providers.values():
        for model in provider.models[:1]:
            try:
                keys.append(config.model_config(f"{provider.name}/{model}").api_key)
            except Exception:  # a provider that cannot be used has no key to hide
                continue
    return [key for key in keys if key]


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), port))
    sock.listen(128)
    sock.set_inheritable(False)
    return sock


async def serve(
    sock: socket.socket,
    workspace: Path,
    flags: dict[str, Any],
    secrets: list[str | None],
    *,
    show_arguments: bool,
    allow_remote: bool = False,
    public_origins: tuple[str, ...] = (),
) -> int:
    import uvicorn

    from ink_tui.providers import demo_replies
    from ink_tui.serve.app import build_app
    from ink_tui.serve.auth import new_token
    from ink_tui.serve.heap import prepare_heap
    from ink_tui.serve.redact import Redactor, env_secrets
    from ink_tui.serve.sessions import SessionRegistry
    from ink_tui.serve.stopping import RefuseWhileStopping, Stopping, StoppingServer
    from ink_tui.session.session_lock import set_front_end

    set_front_end("ink serve")
    # The demo model's tour names the page's buttons, not the terminal's keys.
    demo_replies.set_front_end("page")
    token = new_token()
    redactor = Redactor([*secrets, *env_secrets(), token], show_arguments=show_arguments)
    registry = SessionRegistry(workspace, flags, redactor)
    app = build_app(registry, token, allow_remote=allow_remote, public_origins=public_origins)
    stopping = Stopping(registry)
    config = uvicorn.Config(
        RefuseWhileStopping(app, stopping),
        http=http_implementation(),
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        access_log=False,
    )
    # SIGINT, SIGTERM and SIGHUP are `stopping`'s, not uvicorn's.
    server = StoppingServer(config, stopping)
    # uvicorn's own modules, then a run's, are loaded before the heap is frozen.
    config.load()
    prepare_heap()
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"ink serve: http://{shown}:{port}/?token={token}", flush=True)
    await server.serve(sockets=[sock])
    return await stopping.finish()
