"""A project's `.ink/config.toml` applies in full only once the user trusted it.

A cloned repository's config is untrusted input. Until the user trusts the file as it is
now (its content hash is kept in the user's trust store, `extensions/trust.py`, under
`"config_files"`), the keys that loosen safety or redirect data are held back:

- `[approval] policy` looser than what applies without it (ask < edits < auto);
- `[approval] allow` rules and `[tools] pass_env`;
- every `[providers.*]` table (where requests go, which key, which API);
- `default_model` and `provider` when they change the server requests go to;
- `[keys] focus_approval`: the one key that reaches an approval question must stay the
  user's (a file could bind it to a letter that typed text then presses).

Everything else (theme, keys, limits, timeouts, context windows, compaction) applies.
A changed file (a `git pull`) is untrusted again; ink's own writes to it (an "always"
answer, `approval_file.py`) record the new hash when the file was trusted before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ink_tui.session.config_files import FileLayer, display_path

if TYPE_CHECKING:
    from ink_tui.extensions.trust import TrustStore

SECTION = "config_files"
POLICY_RANK = {"ask": 0, "edits": 1, "auto": 2}
# The settings never applied from an untrusted file.
# checkpoints.enabled: a cloned repository must not turn off what undoes its commands.
HELD_SETTINGS = ("approval.allow", "tools.pass_env", "checkpoints.enabled")
MODEL_SETTINGS = ("default_model", "provider")

TrustState = Literal["new", "changed"]


@dataclass(frozen=True, slots=True)
class HeldBack:
    """What an untrusted project config file set that was not applied."""

    path: Path
    state: TrustState
    # "approval.policy = \"auto\"", "providers.b.base_url = \"http://…\"", …
    keys: tuple[str, ...]
    # The hash of the file as it was read: trusting it trusts what was shown.
    digest: str | None = None

    @property
    def names(self) -> str:
        return ", ".join(self.keys)

    def message(self) -> str:
        why = "is new here" if self.state == "new" else "changed since you trusted it"
        return (
            f"{display_path(self.path)} {why}; not applied until you trust it: "
            f"{self.names}. Start `ink` in this folder to review and trust it, or pass "
            "--trust-project."
        )


def file_hash(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _store(trust_file: Path | None) -> TrustStore:
    from ink_tui.extensions.trust import TrustStore

    return TrustStore(trust_file)


def trust_state(path: Path, trust_file: Path | None = None) -> TrustState | None:
    """None when `path` is trusted as it is now, else "new" or "changed"."""
    recorded = _store(trust_file).trusted_hash(SECTION, str(path.resolve()))
    try:
        current = file_hash(path)
    except OSError:
        return "new" if recorded is None else "changed"
    if recorded == current:
        return None
    return "new" if recorded is None else "changed"


def trust_file_now(path: Path, trust_file: Path | None = None, digest: str | None = None) -> None:
    """Trust `path` as it is now (or as it was when hashed to `digest`); raises OSError
    when the store cannot be written."""
    _store(trust_file).remember(SECTION, str(path.resolve()), digest or file_hash(path))


def _show(value: object) -> str:
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, Path):
        value = str(value)
    return json.dumps(value, ensure_ascii=False)


def hold_back(
    layer: FileLayer,
    user: FileLayer,
    state: TrustState,
    changes_server: Callable[[FileLayer], bool],
) -> HeldBack | None:
    """Take out of `layer` what an untrusted file may not set. `changes_server(layer)`
    says whether the layer's model settings send requests elsewhere than without them."""
    held: list[str] = []
    settings = layer.settings
    policy = settings.get("approval.policy")
    if policy is not None:
        base = str(user.settings.get("approval.policy", "ask"))
        if POLICY_RANK.get(str(policy), 2) > POLICY_RANK.get(base, 0):
            held.append(f"approval.policy = {_show(settings.pop('approval.policy'))}")
    for name in HELD_SETTINGS:
        if name in settings:
            held.append(f"{name} = {_show(settings.pop(name))}")
    for provider, fields in layer.providers.items():
        held.extend(f"providers.{provider}.{key} = {_show(v)}" for key, v in fields.items())
        if not fields:
            held.append(f"providers.{provider}")
    layer.providers.clear()
    if "focus_approval" in layer.keys:
        held.append(f"keys.focus_approval = {_show(layer.keys.pop('focus_approval'))}")
    if any(name in settings for name in MODEL_SETTINGS) and changes_server(layer):
        for name in MODEL_SETTINGS:
            if name in settings:
                held.append(f"{name} = {_show(settings.pop(name))}")
    if not held:
        return None
    # What is left of the file's model choice no longer stops the demo standing in.
    layer.model_keys = [
        key
        for key in layer.model_keys
        if key in settings or (key == "providers" and layer.providers)
    ]
    if not layer.model_keys:
        layer.model_problems.clear()
    try:
        digest: str | None = file_hash(layer.path)
    except OSError:
        digest = None
    return HeldBack(layer.path, state, tuple(held), digest)
