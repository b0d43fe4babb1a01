"""Writes the mariadb workload's input: an SQL script shaped like the MySQL sample "employees"
database's dump (the RowClone paper's mysql workload loads that database): a database, one
InnoDB table of employees, and ROWS seeded rows in multi-row INSERT statements of 1000 rows.
The same seed and row count always give the same file."""

import argparse
import datetime
import random
import string

ROWS_PER_INSERT = 1000


def name(rng: random.Random, length: int) -> str:
    return rng.choice(string.ascii_uppercase) + "".join(rng.choices(string.ascii_lowercase, k=length - 1))


def date(rng: random.Random, first_year: int, last_year: int) -> str:
    start = datetime.date(first_year, 1, 1)
    days = (datetime.date(last_year, 12, 31) - start).days
    return (start + datetime.timedelta(days=rng.randint(0, days))).isoformat()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with open(args.out, "w") as out:
        out.write(
            "CREATE DATABASE employees;\nUSE employees;\n"
            "CREATE TABLE employees (emp_no INT NOT NULL, birth_date DATE NOT NULL, "
            "first_name VARCHAR(14) NOT NULL, last_name VARCHAR(16) NOT NULL, "
            "gender ENUM('M', 'F') NOT NULL, hire_date DATE NOT NULL, PRIMARY KEY (emp_no)) "
            "ENGINE=InnoDB;\n"
        )
        for start in range(0, args.rows, ROWS_PER_INSERT):
            rows = []
            for emp_no in range(10001 + start, 10001 + min(start + ROWS_PER_INSERT, args.rows)):
                rows.append(
                    f"({emp_no},'{date(rng, 1952, 1965)}','{name(rng, rng.randint(4, 12))}',"
                    f"'{name(rng, rng.randint(4, 14))}','{rng.choice('MF')}',"
                    f"'{date(rng, 1985, 2000)}')"
                )
            out.write("INSERT INTO employees VALUES " + ",".join(rows) + ";\n")


if __name__ == "__main__":
    main()
