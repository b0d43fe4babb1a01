"""The ``bulksim`` command line, one module per group of commands (``common`` holds the
top-level group and what the commands share): run traces and workloads, write workloads,
show presets and configs, run sweeps and reproductions. Bad input ends with one line naming
the problem and a non-zero exit status."""

from bulksim.cli import experiments, inspection, reproduce, run, workloads  # noqa: F401  (register the commands)
from bulksim.cli.common import _workload_progress, main

__all__ = ["_workload_progress", "main"]
