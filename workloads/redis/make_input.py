"""Writes the redis workload's input in the Redis protocol (RESP), for `redis-cli --pipe`:
load.resp sets KEYS keys to seeded random values of VALUE_BYTES bytes; update.resp rewrites a
seeded random half of them with BGSAVE in the middle of the stream, so the server forks its
background save while the same client stream keeps writing (copy-on-write in the parent). The
same seed and sizes always give the same files."""

import argparse
import random
from pathlib import Path


def command(*words: bytes) -> bytes:
    out = [b"*%d\r\n" % len(words)]
    for word in words:
        out.append(b"$%d\r\n%s\r\n" % (len(word), word))
    return b"".join(out)


def value(rng: random.Random, size: int) -> bytes:
    return rng.randbytes(size // 2 + 1).hex()[:size].encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keys", type=int, required=True)
    parser.add_argument("--value-bytes", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--dir", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    directory = Path(args.dir)
    with open(directory / "load.resp", "wb") as out:
        for key in range(args.keys):
            out.write(command(b"SET", b"key:%08d" % key, value(rng, args.value_bytes)))
    updates = rng.sample(range(args.keys), args.keys // 2)
    with open(directory / "update.resp", "wb") as out:
        for i, key in enumerate(updates):
            if i == len(updates) // 4:
                out.write(command(b"BGSAVE"))
            out.write(command(b"SET", b"key:%08d" % key, value(rng, args.value_bytes)))


if __name__ == "__main__":
    main()
