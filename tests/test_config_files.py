"""Config file parsing: every mistake is reported with file, line and key, and skipped alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from ink_tui.session.config import Config, load_config
from ink_tui.session.config_files import KeyLines, parse_config_text, read_config_file


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load(tmp_path: Path, user_text: str | None = None, workspace_text: str | None = None) -> Config:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    user = tmp_path / "user" / "config.toml"
    if user_text is not None:
        write(user, user_text)
    if workspace_text is not None:
        write(workspace / ".ink" / "config.toml", workspace_text)
    # The workspace file as a trusted one applies (tests/test_project_trust.py: untrusted).
    return load_config(workspace, flags={}, environ={}, user_config_path=user, trust_project=True)


def test_bad_toml_names_file_line_and_column_and_contributes_nothing(tmp_path: Path) -> None:
    config = load(
        tmp_path, 'theme = "nord"\nsteering_mode = "one-at-a-time"\nmax_iterations = = 3\n'
    )
    user = tmp_path / "user" / "config.toml"
    [problem] = config.problems
    assert problem == (
        f"{user} line 3, column 18: invalid TOML at key 'max_iterations' (Invalid value); "
        "file ignored"
    )
    # Nothing from the broken file applies, not even its valid lines.
    assert config.theme == "textual-dark"
    assert config.source("steering_mode") == "default"
    assert not config.files[0].loaded and config.files[0].found


def test_unknown_key_gets_its_line_and_a_suggestion(tmp_path: Path) -> None:
    text = '# my settings\n\ntheme = "nord"\n\n\n\nsteer_mode = "all"\n'
    config = load(tmp_path, text)
    user = tmp_path / "user" / "config.toml"
    assert config.problems == [
        f"{user} line 7: unknown key 'steer_mode' (did you mean 'steering_mode'?)"
    ]
    assert config.theme == "nord"


def test_message_uses_tilde_for_files_under_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    path = write(tmp_path / ".config" / "ink" / "config.toml", "\n" * 6 + 'steer_mode = "all"\n')
    layer = read_config_file(path, "user")
    assert layer.problems == [
        "~/.config/ink/config.toml line 7: unknown key 'steer_mode' (did you mean 'steering_mode'?)"
    ]


def test_wrong_type_names_the_line_and_the_other_keys_still_apply(tmp_path: Path) -> None:
    text = 'theme = "nord"\n[tools]\nmax_bytes = 1000\nmax_lines = "ten"\nmax_entries = 20\n'
    config = load(tmp_path, text)
    user = tmp_path / "user" / "config.toml"
    assert config.problems == [
        f"{user} line 4: 'tools.max_lines' must be an integer >= 1, got string 'ten'; ignored"
    ]
    limits = config.run_settings().limits
    assert (limits.max_lines, limits.max_bytes, limits.max_entries) == (2000, 1000, 20)
    assert config.theme == "nord"


def test_invalid_enum_value_is_reported_and_the_lower_layer_applies(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        user_text='steering_mode = "one-at-a-time"\n',
        workspace_text='interrupt_queue = "keep"\nsteering_mode = "some"\n',
    )
    ws_file = tmp_path / "ws" / ".ink" / "config.toml"
    assert config.problems == [
        f"{ws_file} line 2: 'steering_mode' must be one of 'all', 'one-at-a-time', "
        "got string 'some'; ignored"
    ]
    assert config.steering_mode == "one-at-a-time"
    assert config.source("steering_mode").startswith("user config ")
    assert config.interrupt_queue == "keep"


def test_negative_integer_and_zero_grace_are_refused(tmp_path: Path) -> None:
    config = load(tmp_path, "max_iterations = -3\nabort_grace_s = 0\nfollow_up_mode = 'all'\n")
    user = tmp_path / "user" / "config.toml"
    assert config.problems == [
        f"{user} line 1: 'max_iterations' must be an integer >= 1, got -3; ignored",
        f"{user} line 2: 'abort_grace_s' must be a number > 0, got 0; ignored",
    ]
    assert config.run_settings().loop.max_iterations == 100
    assert config.run_settings().loop.abort_grace_s == 10.0
    assert config.follow_up_mode == "all"


def test_boolean_is_not_an_integer(tmp_path: Path) -> None:
    config = load(tmp_path, "max_iterations = true\n")
    assert config.problems and "got boolean true" in config.problems[0]
    assert config.value("max_iterations") == 100


def test_key_outside_its_table_is_pointed_to_the_table(tmp_path: Path) -> None:
    config = load(tmp_path, "max_lines = 5\n")
    assert config.problems[0].endswith(
        "line 1: unknown key 'max_lines' (did you mean '[tools] max_lines'?)"
    )


def test_unknown_keys_in_tables_name_the_table(tmp_path: Path) -> None:
    text = (
        "[providers.local]\n"
        'base_url = "http://localhost:8080/v1"\n'
        'modles = ["a"]\n'
        "[keys]\n"
        'interupt = "ctrl+x"\n'
        'follow_up = "ctrl+enter"\n'
        "[tool]\n"
        "max_lines = 5\n"
    )
    config = load(tmp_path, text)
    user = tmp_path / "user" / "config.toml"
    assert config.problems == [
        f"{user} line 3: unknown key 'modles' in [providers.local] (did you mean 'models'?)",
        f"{user} line 5: unknown action 'interupt' in [keys] (did you mean 'interrupt'?)",
        f"{user} line 7: unknown key 'tool' (did you mean 'tools'?)",
    ]
    assert config.providers["local"].url == "http://localhost:8080/v1"
    assert config.key_bindings["follow_up"] == "ctrl+enter"
    assert config.key_bindings["interrupt"] == "ctrl+c"


def test_same_key_name_in_two_tables_gets_the_right_line(tmp_path: Path) -> None:
    text = (
        "[providers.a]\n"
        'base_url = "http://a/v1"\n'
        "models = []\n"
        "[providers.b]\n"
        'base_url = "http://b/v1"\n'
        "models = [1]\n"
    )
    config = load(tmp_path, text)
    assert len(config.problems) == 1
    assert " line 6: 'providers.b.models' must be a list of strings" in config.problems[0]


def test_provider_base_url_must_be_http(tmp_path: Path) -> None:
    config = load(tmp_path, '[providers.x]\nbase_url = "localhost:8080"\n')
    assert (
        " line 2: 'providers.x.base_url' must start with http:// or https://"
        in (config.problems[0])
    )
    assert config.providers["x"].base_url is None


def test_missing_files_are_listed_as_not_found(tmp_path: Path) -> None:
    config = load(tmp_path)
    assert [(f.kind, f.found) for f in config.files] == [("user", False), ("workspace", False)]
    assert config.problems == []


def test_key_lines_follow_tables_dotted_keys_and_skip_multiline_strings() -> None:
    text = (
        'a = """\n'
        "steering_mode = 1\n"
        '"""\n'
        "tools.max_lines = 3\n"
        '[providers."my.p"]\n'
        "base_url = 1\n"
        "inline = { x = 1 }\n"
        "steering_mode = 2\n"
    )
    lines = KeyLines(text)
    assert lines.line_of(("tools", "max_lines")) == 4
    assert lines.line_of(("providers", "my.p", "base_url")) == 6
    # Keys inside an inline table fall back to the line of the nearest indexed key.
    assert lines.line_of(("providers", "my.p", "inline", "x")) == 7
    # Only the real assignment, not the text inside the multi-line string.
    assert lines.line_of(("providers", "my.p", "steering_mode")) == 8
    assert lines.line_of(("steering_mode",)) is None


def test_api_key_file_is_relative_to_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "config.toml"
    layer = parse_config_text('[providers.p]\napi_key_file = "p.key"\n', path, "user")
    assert layer.providers["p"]["api_key_file"] == tmp_path / "cfg" / "p.key"


SECRET = "sk-FAKE-q8w7e6-secret"


def test_messages_never_repeat_a_key_typed_into_the_file(tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    broken = load(tmp_path, f'theme = "x"\napi_key = "{SECRET}" x\n')
    assert broken.problems[0].startswith(f"{user} line 2, column ")
    assert "invalid TOML at key 'api_key'" in broken.problems[0]
    text = f'[providers.p]\napi_key = "{SECRET}"\napi_key_env = "{SECRET}"\n'
    fixed = load(tmp_path, text)
    assert fixed.problems == [
        f"{user} line 2: unknown key 'api_key' in [providers.p] (keys are not kept in config "
        "files: set api_key_env or api_key_file); ignored",
        f"{user} line 3: 'providers.p.api_key_env' must name an environment variable (letters, "
        "digits and _), not hold the key; ignored",
    ]
    assert SECRET not in "\n".join(broken.problems + fixed.problems)


def test_a_utf8_bom_at_the_start_is_accepted(tmp_path: Path) -> None:
    # Windows editors (Notepad) save UTF-8 with a byte order mark.
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_bytes(b'\xef\xbb\xbftheme = "nord"\nmax_iterations = 7\nbad_key = 1\n')
    config = load(tmp_path)
    assert config.theme == "nord"
    assert config.value("max_iterations") == 7
    # Line numbers still count from the first line.
    assert config.problems == [f"{user} line 3: unknown key 'bad_key'"]
