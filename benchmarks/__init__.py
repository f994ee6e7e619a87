"""Benchmarks of what a user feels: first screen, streaming, typing, long sessions, Ctrl+C.

Run everything with `python -m benchmarks` (or `--quick` for tiny sizes); see
`benchmarks/runner.py` for the options and `benchmarks/report.py` for the figures and their
targets. Each figure lives in its own module (`fig1_first_screen` ... `fig5_interrupt`);
every measured run happens in a fresh child process so that runs do not share memory,
threads or caches.
"""
