# SPDX-License-Identifier: GPL-2.0
"""Tables that tests fill in while they run and the runner prints once at
the end (tools/testing/conftest.py, in pytest's terminal summary): a
summary is a report, not a test, so it can neither pass nor fail."""

# title -> (column names, [rows]); rows are tuples of strings.
TABLES = {}


def add(title, columns, row):
    """Append row to the table title (created with columns on first use)."""
    TABLES.setdefault(title, (columns, []))[1].append(tuple(str(x) for x in row))


def lines(title):
    """The table as aligned text lines, header first."""
    columns, rows = TABLES[title]
    widths = [max(len(x) for x in col) for col in zip(columns, *rows)]
    # The last column is free text: never padded.
    widths[-1] = 0
    return ["  " + "  ".join(f"{x:<{w}}" for x, w in zip(r, widths)).rstrip()
            for r in [columns] + rows]
