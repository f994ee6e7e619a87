"""The app's widgets, one per file, each styled beside itself."""
