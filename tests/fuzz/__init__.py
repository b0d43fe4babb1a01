"""A seeded fuzzer over bulksim's input kinds (request traces in three formats, workload
text and binary, the foreign workload formats msc, ramulator-cpu, rowclone and champsim,
config TOML, `--set` overrides, experiment TOML, results databases and CLI arguments). Each
case mutates a valid input (or keeps it valid), runs the real CLI in a subprocess under a
timeout and a memory limit, and is classified as ok, clean-error, messy-error, traceback,
panic, abort, hang or wrong (accepted, but its results disagree with an independent reading
of the input, or rejected though the documentation says it must run). `python -m tests.fuzz
--help` runs it; `tests/test_fuzz.py` runs a few hundred cases in the test suite;
`docs/fuzzing.md` describes it."""

from .campaign import Campaign, run_campaign
from .kinds import KINDS, make_case
from .runner import CATEGORIES, FAILURES, Limits, Outcome

__all__ = ["CATEGORIES", "FAILURES", "KINDS", "Campaign", "Limits", "Outcome", "make_case", "run_campaign"]
