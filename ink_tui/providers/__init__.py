"""Model providers: the HTTP client for OpenAI-compatible servers and its helpers.

Import the concrete module you need (`ink_tui.providers.openai_compat`); this package
imports nothing so that loading the demo model never pulls in an HTTP stack.
"""
