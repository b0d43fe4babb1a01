"""What every ``bulksim`` command shares: the top-level group (``main``), which turns every
bad-input error into one ``error:`` line; the path type and the error classes; the options
several commands take; progress callbacks; and the checks and guards around the engine's
calls."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

import bulksim
from bulksim import _core, api, provenance

TRACE_FORMATS = list(api.TRACE_FORMATS)
PATTERNS = list(api.TRACE_PATTERNS)
U64 = click.IntRange(0, api.U64_MAX)
#: More local workers than this is surely a typo (each is a process with its own engine).
MAX_WORKERS = 1024


class PathType(click.Path):
    """A path argument or option: ``click.Path`` that also refuses an empty string, which the
    OS would answer with ': No such file or directory', naming neither the path nor the option."""

    def convert(self, value, param, ctx):
        if isinstance(value, str | bytes) and not value:
            self.fail("an empty path; expected a file or directory name", param, ctx)
        return super().convert(value, param, ctx)


class UserError(click.ClickException):
    """A bad config, trace or argument: printed as ``error: message``, exit status 1."""

    def format_message(self) -> str:
        return self.message

    def show(self, file=None) -> None:
        click.echo(f"error: {self.format_message()}", err=True)


def _guard(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except (bulksim.ConfigError, bulksim.TraceError, OSError) as e:
        raise UserError(_message(e)) from e


def _message(error: BaseException) -> str:
    """One line for an error; an OSError names its file first."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return " ".join(str(error).split())


def _input_errors() -> tuple[type[BaseException], ...]:
    """Exception classes that mean bad input (printed as one line), as opposed to bugs (which
    keep their traceback)."""
    from bulksim.experiment.results import ResultsError
    from bulksim.experiment.spec import ExperimentError
    from bulksim.experiment.sweep import SchedulerError
    from bulksim.reproduce.shape import ReproductionError

    classes: list[type[BaseException]] = [
        ReproductionError,
        bulksim.ConfigError,
        bulksim.TraceError,
        api.ArgumentError,
        ExperimentError,
        ResultsError,
        SchedulerError,
    ]
    engine_base = getattr(_core, "BulksimError", None)
    if isinstance(engine_base, type) and issubclass(engine_base, BaseException):
        classes.append(engine_base)
    return tuple(classes)


class OneLineUsageError(click.UsageError):
    """A bad command line, printed as one ``error:`` line naming the command (exit status 2)."""

    def __init__(self, error: click.UsageError):
        super().__init__(error.format_message(), error.ctx)

    def show(self, file=None) -> None:
        where = f"{self.ctx.command_path}: " if self.ctx is not None else ""
        hint = f" (see {self.ctx.command_path} --help)" if self.ctx is not None else ""
        message = " ".join(self.format_message().split())  # click may wrap long messages
        click.echo(f"error: {where}{message}{hint}", err=True)


class Cli(click.Group):
    """The top-level group: every bad-input error of any command becomes one line."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except OneLineUsageError:
            raise
        except click.UsageError as e:
            raise OneLineUsageError(e) from e

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OneLineUsageError:
            raise
        except click.UsageError as e:
            raise OneLineUsageError(e) from e
        except (*_input_errors(), OSError) as e:  # OSError: a path given that cannot be used
            raise UserError(_message(e)) from e


def _progress():
    """A progress callback printing requests done and rate to stderr, when it is a terminal."""
    if not sys.stderr.isatty():
        return None
    start = time.monotonic()

    def report(done: int) -> None:
        rate = done / max(time.monotonic() - start, 1e-9)
        click.echo(f"\r  {done:,} requests, {rate:,.0f}/s", err=True, nl=False)

    return report


def _workload_progress():
    """A progress callback printing instructions retired, simulated time and rate to stderr,
    when it is a terminal (the engine calls it about twice a second)."""
    if not sys.stderr.isatty():
        return None
    start = time.monotonic()

    def report(instructions: int, simulated_ns: float) -> None:
        rate = instructions / max(time.monotonic() - start, 1e-9)
        click.echo(
            f"\r  {instructions:,} instructions, {simulated_ns / 1e6:,.3f} ms simulated, {rate:,.0f}/s",
            err=True,
            nl=False,
        )

    return report


config_option = click.option("--config", "config", type=PathType(dir_okay=False), help="TOML config file.")
preset_option = click.option("--preset", help="Memory part preset (see `bulksim spec list`).")
set_option = click.option(
    "--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a config key (repeatable)."
)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version``: the package version and the engine's build identity (what results are
    keyed on, docs/experiments.md)."""
    if not value or ctx.resilient_parsing:
        return
    click.echo(f"bulksim {bulksim.__version__} (engine {provenance.engine_id()})")
    ctx.exit()


@click.group(cls=Cli)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and the engine's identity, then exit.",
)
def main() -> None:
    """bulksim: cycle-accurate memory-system simulation."""


def _check_output_path(option: str, path: str) -> None:
    """UserError naming ``option`` unless ``path`` can be written (a file that can be created
    or appended to; its content is left as it is, and a file created to find out is removed)."""
    target = Path(path)
    if target.is_dir():
        raise UserError(f"{option} {path}: is a directory; expected a file name")
    if target.exists() and not target.is_file():
        # A device or a pipe (/dev/null, a FIFO read by another program): opening it to try
        # could block or consume it.
        if not os.access(target, os.W_OK):
            raise UserError(f"{option} {path}: cannot be written: Permission denied")
        return
    existed = target.exists()
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    except OSError as e:
        raise UserError(f"{option} {path}: cannot be written: {e.strerror}") from e
    os.close(fd)
    if not existed:
        target.unlink(missing_ok=True)


def _guard_exp(fn, *args, **kwargs):
    from bulksim.experiment.results import ResultsError
    from bulksim.experiment.spec import ExperimentError

    try:
        return _guard(fn, *args, **kwargs)
    except (ExperimentError, ResultsError) as e:
        raise UserError(str(e)) from e


sweep_options = [
    click.option("--results", type=PathType(dir_okay=False), help="SQLite results file."),
    click.option("--out", type=PathType(file_okay=False), help="Directory for report.md and figures."),
    click.option("--scheduler", help="Address of an existing Dask scheduler, e.g. tcp://host:8786."),
    click.option(
        "--workers", type=click.IntRange(1, MAX_WORKERS), help="Local worker processes (default: cores)."
    ),
    click.option(
        "--force",
        is_flag=True,
        help="Rerun points (reproductions: cases) that are already in the results.",
    ),
]


def _with(options):
    def decorate(fn):
        for option in reversed(options):
            fn = option(fn)
        return fn

    return decorate
