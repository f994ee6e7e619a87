"""The agent core: messages, events, abort, tool scheduling and the loop (no UI imports)."""
