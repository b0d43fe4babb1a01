"""The memcached workload's client (not captured): over one loopback connection it stores KEYS
items of VALUE_BYTES seeded random bytes with the text protocol's `set`, BATCH commands in
flight at a time, checks that every reply is STORED, reads back a seeded sample with `get`, and
finally asks the server to exit with `shutdown` (the server runs with -A). The same seed and
sizes always send the same bytes."""

import argparse
import random
import socket
import sys

BATCH = 100
SAMPLE = 100


def read_until(conn: socket.socket, buffer: bytearray, terminator: bytes) -> bytes:
    while terminator not in buffer:
        chunk = conn.recv(65536)
        if not chunk:
            sys.exit("memcached closed the connection before replying")
        buffer += chunk
    end = buffer.index(terminator) + len(terminator)
    reply = bytes(buffer[:end])
    del buffer[:end]
    return reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--keys", type=int, required=True)
    parser.add_argument("--value-bytes", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--timeout", type=float, required=True, help="seconds per reply")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    values = {}
    conn = socket.create_connection(("127.0.0.1", args.port), timeout=args.timeout)
    buffer = bytearray()
    for start in range(0, args.keys, BATCH):
        keys = range(start, min(start + BATCH, args.keys))
        request = bytearray()
        for key in keys:
            values[key] = rng.randbytes(args.value_bytes)
            request += b"set key:%08d 0 0 %d\r\n%s\r\n" % (key, args.value_bytes, values[key])
        conn.sendall(request)
        for key in keys:
            reply = read_until(conn, buffer, b"\r\n")
            if reply != b"STORED\r\n":
                sys.exit(f"set key:{key:08d}: memcached replied {reply!r}, expected STORED")
    for key in rng.sample(range(args.keys), min(SAMPLE, args.keys)):
        conn.sendall(b"get key:%08d\r\n" % key)
        header = read_until(conn, buffer, b"\r\n")
        expected = b"VALUE key:%08d 0 %d\r\n" % (key, args.value_bytes)
        if header != expected:
            sys.exit(f"get key:{key:08d}: memcached replied {header!r}, expected {expected!r}")
        body = read_until(conn, buffer, b"\r\nEND\r\n")
        if body[: args.value_bytes] != values[key]:
            sys.exit(f"get key:{key:08d}: memcached returned a different value than was set")
    conn.sendall(b"shutdown\r\n")
    conn.close()


if __name__ == "__main__":
    main()
