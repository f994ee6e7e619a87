"""/status: the session at a glance (id and file, model, tokens and cost, context,
approval policy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ink_tui.ui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from ink_tui.control.usage import SessionUsage
    from ink_tui.ui.app_host import AppHost


def status_report(app: AppHost) -> str:
    status = app.query_one(StatusBar)
    binding = app.binding
    writer = binding.writer if binding is not None else None
    if writer is not None:
        session = [f"Session {writer.id}", f"  file:     {writer.path}"]
    else:
        session = ["Session (not saved: /resume and ink -c will not find it)"]
    controller = app.controller
    policy = controller.approvals.policy if controller is not None else "?"
    context = status.context_label().removeprefix("ctx ") or "unknown (no reply yet, or no window)"
    return "\n".join(
        [
            *session,
            f"  model:    {status.model_label}",
            f"  tokens:   {tokens_line(status.usage)}",
            f"  cost:     {cost_line(status.usage)}",
            f"  context:  {context}",
            f"  approval: {policy}",
        ]
    )


def tokens_line(usage: SessionUsage) -> str:
    cached = f" ({usage.cached_tokens:,} cached)" if usage.cached_tokens else ""
    return (
        f"{usage.input_tokens:,} in{cached}, {usage.output_tokens:,} out "
        f"({usage.total_tokens:,} in all)"
    )


def cost_line(usage: SessionUsage) -> str:
    from ink_tui.providers.demo import DemoProvider

    if usage.total_tokens == 0:
        return "nothing used yet"
    if usage.unpriced == {DemoProvider.model}:
        # Its tokens are counted, but nothing bills them: no `[prices]` entry to ask for.
        return "none: the offline demo model is free"
    if usage.unpriced:
        models = ", ".join(sorted(usage.unpriced))
        return f"price unknown for {models}: set [prices] in the config"
    return usage.cost_label()
