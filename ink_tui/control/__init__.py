"""Run control: the controller, the input queue and the event bus (no UI imports)."""
