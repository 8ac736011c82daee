"""Real workloads shipped with perfcast, run by the default config on the local machine.

Each is a module runnable as ``python -m perfcast.workloads.<name>``.
"""
