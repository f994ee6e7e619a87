"""ink_tui: a terminal coding agent built around run control."""

__version__ = "0.1.0"
