"""Experiments: sweeps of configurations and workloads, as files. This package owns the
experiment file and its points (``spec``), running the points on a process pool or a Dask
cluster (``sweep``), the SQLite results store every run lands in, keyed by the engine that made
it (``results``; the reproductions use it too), and an experiment's figures and report
(``plots``). The bundled experiment files are in ``bundled/``. The experiment file's names are
re-exported here (``experiment.load``, ``experiment.Experiment``, ...)."""

from bulksim.experiment.spec import (
    EXPERIMENTS_DIR,
    Experiment,
    ExperimentError,
    Point,
    bundled,
    content_sha256,
    find,
    generator_params,
    load,
    materialise,
)

__all__ = [
    "EXPERIMENTS_DIR",
    "Experiment",
    "ExperimentError",
    "Point",
    "bundled",
    "content_sha256",
    "find",
    "generator_params",
    "load",
    "materialise",
]
