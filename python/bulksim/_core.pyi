from collections.abc import Callable
from typing import Any

__version__: str
#: The engine's build identity, ``<version>+<16 hex digits>``: a SHA-256 of both crates'
#: sources, their Cargo files and the build profile, computed by crates/bulksim-py/build.rs.
ENGINE_ID: str

class ConfigError(ValueError): ...
class TraceError(ValueError): ...

def resolve_config(config_path: str | None, preset: str | None, sets: list[str]) -> str: ...
def run_trace(
    config_path: str | None,
    preset: str | None,
    sets: list[str],
    trace: str,
    trace_format: str,
    command_log: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[str, str]: ...
def spec_json(config_path: str | None, preset: str | None, sets: list[str]) -> str: ...
def preset_names() -> list[str]: ...
def check_config(path: str) -> list[str]: ...
def config_fields() -> str: ...
def stat_docs() -> str: ...
def stat_groups() -> list[tuple[str, list[str]]]: ...
def timing_params() -> list[tuple[str, str]]: ...
def default_config() -> str: ...
def generate_trace(
    path: str,
    pattern: str,
    requests: int,
    interval: int = 0,
    write_fraction: float = 0.0,
    footprint: int = ...,
    seed: int = 0,
) -> None: ...
def run_workload(
    config_path: str | None,
    preset: str | None,
    sets: list[str],
    workload: str,
    command_log: str | None = None,
    progress: Callable[[int, float], None] | None = None,
    fmt: str | None = None,
    copies: int = 1,
) -> tuple[str, str]: ...
def detect_workload_format(path: str) -> str: ...
def run_workload_mix(
    config_path: str | None,
    preset: str | None,
    sets: list[str],
    programs: list[tuple[str, str | None]],
    progress: Callable[[int, float], None] | None = None,
) -> tuple[str, str]: ...
def workload_formats() -> list[str]: ...
def convert(
    src: str,
    dst: str,
    to_fmt: str,
    from_fmt: str | None = None,
    cache: bool = False,
    config_path: str | None = None,
    sets: list[str] = ...,
    max_instructions: int | None = None,
) -> tuple[str, int, int, int, int, int]: ...
def convert_formats() -> tuple[list[str], list[str]]: ...
def run_workload_read(
    config_path: str | None,
    preset: str | None,
    sets: list[str],
    workload: str,
    regions: list[tuple[int, int, int]],
) -> tuple[str, str, list[bytes | None]]: ...
def generate_forkbench(
    path: str,
    array_bytes: int,
    pages_updated: int,
    seed: int = 1,
    binary: bool = True,
    parent_thread: int = 0,
    child_thread: int = 1,
) -> None: ...
def generate_random_access(
    path: str,
    region_bytes: int,
    accesses: int,
    write_percent: int = 25,
    work: int = 2,
    seed: int = 1,
    thread: int = 0,
    binary: bool = True,
) -> None: ...
def system_stat_docs() -> str: ...
def generate_synthetic(
    name: str,
    path: str,
    threads: int = 0,
    accesses: int = 250_000,
    working_set: str = "small",
    seed: int = 1,
) -> dict[str, Any]: ...
def synthetic_names() -> list[str]: ...
def standin_info() -> dict[str, Any]: ...
def write_standin(
    path: str, kind: str, size_mb: int, instructions: int, seed: int, instructions_per_ms: int
) -> str: ...
def dump_standin(spec: str, out: str, instructions: int) -> int: ...
