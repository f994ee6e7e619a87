"""When the model the user configured cannot be used: refuse to start, and say why.

The offline demo model is for a machine where nothing about a model is configured. Once
the user has said which model to use (a `--base-url`/`--model`/`--api-key` flag, an
`INK_*`/`OPENAI_*` variable, `default_model`, `provider` or a `[providers.*]` table in a
config file), quietly answering with the demo instead would pass its text off as the
real model's. So `ink` and `ink -p` stop with exit status 2 and these messages when:

- resolving the choice ran into a problem: an unknown provider name, a provider without
  a base_url, a key file that is missing or readable by others, a key variable that is
  empty, a base URL that is not http(s);
- or it ended at the demo although something was configured (a model name no provider
  lists, a provider table whose every field was refused, a config file that is not valid
  TOML but sets providers).

Each message says what is wrong and where it was configured. Mistakes elsewhere in the
config (an unknown theme, a bad `max_iterations`) stay warnings: the run can go on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from ink_tui.session.config_files import FileLayer
from ink_tui.session.config_layers import ProviderConfig
from ink_tui.session.model_choice import ModelChoice

EXIT_MODEL_UNUSABLE = 2


class ModelSetup(Protocol):
    """What this module reads of a `config.Config`: that module imports this one (its
    `model_errors` are found here), so the dependency is named by shape, not by import."""

    @property
    def model(self) -> ModelChoice: ...

    @property
    def files(self) -> Sequence[FileLayer]: ...

    @property
    def providers(self) -> Mapping[str, ProviderConfig]: ...

    @property
    def model_errors(self) -> Sequence[str]: ...

    def model_sources(self) -> list[str]: ...


def find_model_errors(config: ModelSetup, notes: list[str]) -> list[str]:
    """Why the configured model cannot be used; [] when it can (or nothing is configured).

    `notes` are the problems met while resolving the model choice; any of them is fatal.
    """
    errors = list(notes)
    if not config.model.is_demo:
        return errors
    sources = config.model_sources()
    if not sources:
        return errors
    for layer in config.files:
        errors.extend(problem for problem in layer.model_problems if problem not in errors)
    for provider in config.providers.values():
        if provider.url is None:
            where = ", ".join(provider.sources)
            message = f"[providers.{provider.name}] ({where}) has no base_url"
            if not any(f"providers.{provider.name}" in error for error in errors):
                errors.append(message)
    if not errors:
        model = config.model.model
        named = f"no [providers.*] table lists model '{model}', and " if model else ""
        errors.append(
            f"{named}no base URL or API key is set (--base-url or INK_BASE_URL, --api-key "
            "or INK_API_KEY, or default_model with a [providers.<name>] table)"
        )
    return errors


def render_model_errors(config: ModelSetup) -> list[str]:
    """The lines to print (without the "ink: " prefix) when `config.model_errors`."""
    configured = ", ".join(config.model_sources()) or "the configuration"
    lines = [f"the model you configured cannot be used (configured by: {configured}):"]
    lines += [f"  {error}" for error in config.model_errors]
    lines.append(
        "nothing was run. `ink config` shows every setting and where it came from; with "
        "no model configured at all, ink runs its offline demo."
    )
    return lines
