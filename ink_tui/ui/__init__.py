"""The full-screen Textual app: widgets subscribe to the bus, a worker runs the loop."""
