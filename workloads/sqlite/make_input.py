"""Writes the sqlite workload's input: one SQL script that creates a table, inserts ROWS rows of
seeded pseudo-random data in one transaction, then builds an index on them. The same seed and
row count always give the same file byte for byte (random.Random's sequence is stable across
Python versions for a given seed)."""

import argparse
import random
import string


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    letters = string.ascii_lowercase
    with open(args.out, "w") as out:
        out.write(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT NOT NULL, "
            "item TEXT NOT NULL, quantity INTEGER NOT NULL, price REAL NOT NULL, "
            "note TEXT NOT NULL);\nBEGIN;\n"
        )
        for row in range(1, args.rows + 1):
            customer = "".join(rng.choices(letters, k=12))
            item = "".join(rng.choices(letters, k=8))
            note = "".join(rng.choices(letters, k=64))
            out.write(
                f"INSERT INTO orders VALUES ({row}, '{customer}', '{item}', "
                f"{rng.randint(1, 100)}, {rng.randint(1, 1_000_000) / 100}, '{note}');\n"
            )
        out.write("COMMIT;\nCREATE INDEX orders_by_customer ON orders (customer);\n")


if __name__ == "__main__":
    main()
