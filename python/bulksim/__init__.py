"""bulksim: a cycle-accurate memory-system simulator for in-memory bulk data movement.

The engine is Rust (``bulksim._core``); this package is the front end: ``run`` simulates a
request trace, ``run_workload`` a full-system workload (cores, caches, OS),
``resolve_config`` shows a fully resolved configuration, ``spec`` exports a
preset's organisation and timing, ``generate_trace`` writes synthetic traces, and
``results.load`` reads a sweep's results as a DataFrame.
"""

from bulksim._core import ConfigError, TraceError, __version__
from bulksim.api import (
    Stats,
    check_config,
    config_fields,
    generate_forkbench,
    generate_trace,
    presets,
    resolve_config,
    run,
    run_workload,
    spec,
    stat_docs,
    system_stat_docs,
)
from bulksim.experiment import results

__all__ = [
    "ConfigError",
    "Stats",
    "check_config",
    "TraceError",
    "__version__",
    "config_fields",
    "generate_forkbench",
    "generate_trace",
    "presets",
    "results",
    "resolve_config",
    "run",
    "run_workload",
    "spec",
    "stat_docs",
    "system_stat_docs",
]
