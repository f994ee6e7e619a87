"""Persistence and configuration: what is read from and written to disk."""
