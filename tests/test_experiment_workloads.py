"""Item 9 of issue 34: an experiment file takes any workload `bulksim run --workload` takes
(`workload = PATH`, its format detected or given, `copies`), runs it on the full system, keys
it by its bytes, and refuses what it cannot take with one line naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from bulksim import experiment
from bulksim.experiment import results, sweep
from bulksim.experiment.spec import ExperimentError

EXPERIMENT = """
name = "full_system"
[grid]
"controller.page_policy" = ["open", "closed"]
[[workloads]]
name = "msc_pair"
workload = "w.msc"
copies = 2
"""


def write_msc(path: Path, accesses: int = 300, stride: int = 4160) -> None:
    path.write_text("".join(f"{i % 7} R {0x1000 + stride * i:#x} 0x1\n" for i in range(accesses)))


def test_a_full_system_workload_runs_with_its_copies_and_resumes_by_its_bytes(tmp_path):
    write_msc(tmp_path / "w.msc")
    path = tmp_path / "exp.toml"
    path.write_text(EXPERIMENT)
    exp = experiment.load(path)
    (w,) = exp.workloads
    assert (w["format"], w["copies"]) == ("msc", 2)  # detected from the content
    db = tmp_path / "r.db"
    first = sweep.sweep(exp, db, workers=1, progress=False)
    assert (first.ok, first.failed, first.skipped) == (2, 0, 0), first.failures
    df = results.load(db)
    assert sorted(df["controller.page_policy"]) == ["closed", "open"]
    assert all(len(cores) == 2 and cores[0]["instructions"] > 0 for cores in df["cores"])
    assert (df["ipc"] > 0).all()
    again = sweep.sweep(experiment.load(path), db, workers=1, progress=False)
    assert (again.ok, again.skipped) == (0, 2)
    write_msc(tmp_path / "w.msc", stride=8256)  # same name, other bytes: other runs
    changed = sweep.sweep(experiment.load(path), db, workers=1, progress=False)
    assert (changed.ok, changed.skipped) == (2, 0)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('workload = "w.msc"\nformat = "dramsim3"', "format: unknown value 'dramsim3'"),
        ('workload = "w.msc"\ncopies = 0', "copies"),
        ('workload = "nowhere.msc"', "no such workload file or directory"),
        ('workload = "w.msc"\nrequests = 5', "requests"),
        ('trace = "w.msc"\nformat = "msc"', "write workload = "),
        ('workload = "w.msc"\ntrace = "w.msc"', "not both"),
        ('workload = "junk.bin"', "as format = ..."),
    ],
)
def test_what_an_experiment_cannot_take_is_one_error_naming_the_key(tmp_path, entry, message):
    write_msc(tmp_path / "w.msc")
    (tmp_path / "junk.bin").write_bytes(b"\x00\x01\x02 not a workload")
    path = tmp_path / "exp.toml"
    path.write_text(f'name = "bad"\n[[workloads]]\nname = "w"\n{entry}\n')
    with pytest.raises(ExperimentError, match="workloads\\[0\\]") as raised:
        experiment.load(path)
    assert message in str(raised.value) and str(path) in str(raised.value)
