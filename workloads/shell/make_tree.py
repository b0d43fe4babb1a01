"""Builds the shell workload's input: a directory tree of DIRS directories (a seeded random
tree: each new directory goes under one already made) holding FILES small files of seeded
sizes and contents. The same seed and sizes always give the same tree."""

import argparse
import random
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dirs", type=int, required=True)
    parser.add_argument("--files", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--root", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = Path(args.root)
    root.mkdir()
    dirs = [root]
    for i in range(1, args.dirs):
        parent = rng.choice(dirs)
        dirs.append(parent / f"d{i:04d}")
        dirs[-1].mkdir()
    for i in range(args.files):
        size = rng.choice((0, 100, 1000, 4096, 10000))
        (rng.choice(dirs) / f"f{i:05d}.dat").write_bytes(rng.randbytes(size))


if __name__ == "__main__":
    main()
