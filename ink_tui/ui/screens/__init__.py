"""Modal screens the App pushes: pickers (`list_picker`, `session_picker`) and /help
(`help_screen`).

Nothing is imported here, so that start-up does not pay for screens until one is shown;
import them from their modules.
"""
