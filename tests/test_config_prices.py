"""`[prices]`: per-model prices in dollars per million tokens, checked as they are read."""

from __future__ import annotations

from pathlib import Path

from ink_tui.core.prices import Price
from tests.test_config_files import load


def test_prices_are_read_and_the_workspace_file_wins(tmp_path: Path) -> None:
    user = (
        '[prices]\n"gpt-4o" = { input = 2.5, output = 10 }\n'
        '"local/qwen3" = { input = 0, output = 0 }\n'
    )
    workspace = '[prices]\n"gpt-4o" = { input = 1.0, output = 4.0, cache_read = 0.5 }\n'
    config = load(tmp_path, user, workspace)
    assert config.problems == []
    assert config.prices == {
        "gpt-4o": Price(1.0, 4.0, 0.5),
        "local/qwen3": Price(0.0, 0.0),
    }


def test_bad_prices_are_refused_with_the_line_and_what_is_wrong(tmp_path: Path) -> None:
    text = (
        "[prices]\n"
        "a = 3.0\n"
        "b = { input = 3.0 }\n"
        'c = { input = "3", output = 1 }\n'
        "d = { input = 1, output = -1 }\n"
        "e = { input = 1, output = 2, cache = 0.1 }\n"
        "f = { input = true, output = 1 }\n"
        "ok = { input = 1, output = 2 }\n"
    )
    config = load(tmp_path, text)
    user = tmp_path / "user" / "config.toml"
    assert config.problems == [
        f"{user} line 2: 'prices.a' must be a table like {{ input = 3.0, output = 15.0 }}, "
        "got 3.0; ignored",
        f"{user} line 3: 'prices.b' needs 'output' (dollars per million tokens), as in "
        "{ input = 3.0, output = 15.0 }; ignored",
        f"{user} line 4: 'prices.c' 'input' must be dollars per million tokens (a number >= 0), "
        "got string '3'; ignored",
        f"{user} line 5: 'prices.d' 'output' must be dollars per million tokens (a number >= 0), "
        "got -1; ignored",
        f"{user} line 6: 'prices.e' has an unknown field 'cache' (did you mean 'cache_read'?); "
        "it takes input, output and cache_read; ignored",
        f"{user} line 7: 'prices.f' 'input' must be dollars per million tokens (a number >= 0), "
        "got boolean true; ignored",
    ]
    assert config.prices == {"ok": Price(1.0, 2.0)}


def test_prices_must_be_a_table(tmp_path: Path) -> None:
    config = load(tmp_path, 'prices = "cheap"\n')
    assert len(config.problems) == 1
    assert "'prices' must be a table ([prices]); ignored" in config.problems[0]
    assert config.prices == {}
