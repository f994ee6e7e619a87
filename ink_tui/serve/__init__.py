"""`ink serve`: sessions over HTTP (JSON routes and SSE events) and a browser page.

A front end beside the TUI, print mode and RPC mode, over the public session API
(`ink_tui.api.AgentSession`) and the public event projection. The protocol is in
docs/serve.md. One purpose per module:

- `main`: the command line (`ink serve ...`), the loopback check, starting uvicorn;
- `stopping`: SIGINT / SIGTERM / SIGHUP: runs aborted, sessions closed, exit 130/143/129;
- `app`: the Starlette app (routes, token check, page, errors);
- `auth`: the access token (header, cookie, `?token=`);
- `guard`: requests from elsewhere refused (Host, Origin of cookie-borne changes, JSON
  bodies of at most 1 MiB) and the security headers on every answer;
- `sessions`: the sessions this server holds, each with its own lock and event log;
- `events_stream`: the replay buffer and SSE streams;
- `redact`: what may leave the server (arguments and write / edit results reduced
  without `--show-tool-arguments`, secrets masked everywhere);
- `responses`: JSON answers and request bodies;
- `routes_sessions`, `routes_messages`, `routes_queue`, `routes_approvals`,
  `routes_events`: the routes;
- `static/`: the page (index.html, app.js, app.css).
"""
