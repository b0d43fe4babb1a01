"""``bulksim spec``, ``bulksim config`` and ``bulksim trace gen``: presets and resolved configs
shown with their units, a config file checked, a synthetic request trace written."""

from __future__ import annotations

import json

import click

from bulksim import _core, api
from bulksim.cli.common import (
    PATTERNS,
    U64,
    PathType,
    _guard,
    config_option,
    main,
    preset_option,
    set_option,
)


@main.group()
def spec() -> None:
    """Memory part presets."""


@spec.command("list")
def spec_list() -> None:
    """List the presets."""
    for name in api.presets():
        s = api.spec(name)
        o = s["organisation"]
        click.echo(
            f"{name:20} {s['standard']}-{s['data_rate_mts']}, "
            f"{o['bankgroups'] * o['banks_per_group']} banks, "
            f"{o['rows']} rows x {o['columns']} columns  ({s['source']})"
        )


#: How a preset's `power.source` starts when its currents are borrowed from another part
#: (the engine's `spec::STAND_IN_SOURCE`).
STAND_IN_CURRENTS = "stand-in"


@spec.command("show")
@click.argument("preset")
@set_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON (organisation, timing in cycles).")
def spec_show(preset, overrides, as_json) -> None:
    """Show a preset's organisation and timing (after any --set overrides)."""
    s = _guard(api.spec, preset, None, overrides)
    if as_json:
        click.echo(json.dumps(s, indent=2))
        return
    click.echo(f"{s['name']}: {s['standard']}-{s['data_rate_mts']} (tCK {s['tck_ns']:.4g} ns)")
    click.echo(f"source: {s['source']}")
    currents = s["power"]["source"]
    click.echo(f"energy currents: {currents}")
    if currents.startswith(STAND_IN_CURRENTS):
        click.echo(
            "note: these currents are a stand-in, not this part's own: its energy figures are "
            "estimates (docs/energy.md)"
        )
    for key, value in s["organisation"].items():
        click.echo(f"  {key:20} {value}")
    descriptions = dict(_core.timing_params())
    for key, value in s["timing"].items():
        click.echo(f"  {key:8} {value:6} cycles  {descriptions.get(key, '')}")
    if s.get("precharge_per_dirty_block"):
        click.echo(
            "  precharge: nRP per dirty 64-B block written since the ACT (a row only read closes at once)"
        )
    energy = s.get("bit_energy")
    if energy:
        click.echo(
            f"  energy (pJ/bit): array read {energy['array_read_pj']} write {energy['array_write_pj']}, "
            f"buffer read {energy['buffer_read_pj']} write {energy['buffer_write_pj']} ({energy['source']})"
        )


@main.group()
def config() -> None:
    """Inspect and check configurations."""


@config.command("show")
@preset_option
@config_option
@set_option
def config_show(preset, config, overrides) -> None:
    """Print the fully resolved config, each field with its unit and description."""
    text = _guard(api.resolve_config, config, preset=preset, overrides=overrides)
    docs = {f["key"]: f for f in api.config_fields()}
    section = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]")
            click.echo(line)
            continue
        key = stripped.split("=", 1)[0].strip()
        doc = docs.get(f"{section}.{key}")
        if doc and stripped:
            click.echo(f"{line:45} # [{doc['unit']}] {doc['description']}")
        else:
            click.echo(line)


@config.command("check")
@click.argument("file", type=PathType(dir_okay=False))
def config_check(file) -> None:
    """Validate a config file (and the files it includes); name every problem."""
    problems = api.check_config(file)
    if problems:
        for problem in problems:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(1)
    click.echo(f"{file}: ok")


@main.group()
def trace() -> None:
    """Request traces."""


@trace.command("gen")
@click.argument("out", type=PathType(dir_okay=False))
@click.option(
    "--pattern", type=click.Choice(PATTERNS), required=True, help="Access pattern (docs/traces.md)."
)
@click.option("--requests", type=click.IntRange(1, api.U64_MAX), required=True, help="Number of requests.")
@click.option("--interval", type=U64, default=0, show_default=True, help="Cycles between requests.")
@click.option(
    "--write-fraction",
    type=click.FloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Probability a request is a write.",
)
@click.option(
    "--footprint",
    type=click.IntRange(api.MIN_FOOTPRINT, api.U64_MAX),
    default=1 << 30,
    show_default=True,
    help="Bytes.",
)
@click.option(
    "--seed", type=U64, default=0, show_default=True, help="Generator seed (same seed, same trace)."
)
def trace_gen(out, pattern, requests, interval, write_fraction, footprint, seed) -> None:
    """Write a synthetic trace in the native format."""
    _guard(
        api.generate_trace,
        out,
        pattern,
        requests,
        interval=interval,
        write_fraction=write_fraction,
        footprint=footprint,
        seed=seed,
    )
    click.echo(f"wrote {requests:,} requests to {out}")
