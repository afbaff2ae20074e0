# SPDX-License-Identifier: GPL-2.0
"""The hardening table (issue 13, docs/HARDENING.md): what the hostile-frame,
fault and hostile-process tests injected and verified, and what the kernel
reported, summed from the JUnit XML pytest writes for them.

The tests record their figures as properties (pytest's record_property):
frames (hostile frames sent), faults (faults injected), hostile (hostile
process runs: a mode, or a kill), bytes_verified. A kernel report or a
kmemleak leak fails the test in conftest's gate, whose message names it;
a resource count not back at its baseline fails it with "rdma resource".

  /usr/bin/python3 -m tools.testing.bench.lib.hardening JUNIT [OUT.md]
"""
import re
import sys
import xml.etree.ElementTree as ET

FIGURES = ("frames", "faults", "hostile", "bytes_verified")
COLUMNS = ("tests", "passed", "failed", "skipped") + FIGURES + ("kernel reports", "leaks")


def _failure_text(case):
    return "\n".join((e.get("message") or "") + "\n" + (e.text or "")
                     for e in case if e.tag in ("failure", "error"))


def _per_guest(pattern, text):
    """The sum of the counts pattern finds, once per guest it names."""
    return sum(int(n) for n in dict(re.findall(pattern, text)).values())


def collect(xml_text):
    """{file: {column: number}} from a JUnit XML document."""
    rows = {}
    for case in ET.fromstring(xml_text).iter("testcase"):
        name = (case.get("classname") or "").split(".")[-1] or "?"
        row = rows.setdefault(name, dict.fromkeys(COLUMNS, 0))
        row["tests"] += 1
        failed = _failure_text(case)
        if any(e.tag == "skipped" for e in case):
            row["skipped"] += 1
        elif failed:
            row["failed"] += 1
        else:
            row["passed"] += 1
        # The gate's message stands in the failure's message and its text.
        row["kernel reports"] += _per_guest(r"kernel log of (\w+): (\d+) report", failed)
        row["leaks"] += (_per_guest(r"kmemleak in (\w+): (\d+) leak", failed) +
                         ("rdma resource" in failed))
        for prop in case.iter("property"):
            if prop.get("name") in FIGURES:
                row[prop.get("name")] += int(prop.get("value"))
    return rows


def table(rows):
    """The Markdown table, a row per test file and their total."""
    total = dict.fromkeys(COLUMNS, 0)
    for row in rows.values():
        for k in COLUMNS:
            total[k] += row[k]
    lines = ["| file | " + " | ".join(COLUMNS) + " |",
             "| --- |" + " --- |" * len(COLUMNS)]
    for name, row in sorted(rows.items()) + [("total", total)]:
        lines.append(f"| {name} | " + " | ".join(str(row[k]) for k in COLUMNS) + " |")
    return "\n".join(lines)


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    try:
        with open(argv[1]) as f:
            text = table(collect(f.read()))
    except (OSError, ET.ParseError) as e:
        sys.exit(f"hardening: cannot read {argv[1]}: {e}")
    print(text)
    if len(argv) == 3:
        with open(argv[2], "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main(sys.argv)
