"""The kernel log gate: which kmsg records make a test fail."""
import re

# Generic signs of a kernel problem, whatever the subsystem.
BAD_PATTERNS = [
    r"WARNING:", r"BUG:", r"Oops", r"general protection", r"refcount_t:",
    r"list_del corruption", r"list_add corruption", r"INFO: task .* blocked",
    r"possible circular locking", r"inconsistent lock state", r"lockdep",
    r"KASAN", r"UBSAN", r"kernel BUG", r"Call Trace", r"unregister_netdevice: waiting",
    # The debug kernel's checkers (scripts/debug.config): most of their
    # headlines carry BUG: or WARNING: as well, these are the others.
    r"suspicious RCU", r"sleeping function called", r"ODEBUG:",
    r"kmemleak: .*suspected memory leak", r"detected stalls? on CPU", r"self-detected stall",
]
BAD_RE = re.compile("|".join(BAD_PATTERNS))
# Errors (level 0..3) about the driver or its devices, from it or from ib_core.
ERR_LEVEL = 3
DRIVER_RE = re.compile(r"sroce")
# ib_core's warnings that one of the driver's verbs failed, whatever level.
CORE_WARN_RE = re.compile(r"ib_query_port failed")


def offending(records):
    """Return the records (dicts with "level" and "text") that fail the gate,
    in their original order."""
    return [r for r in records
            if BAD_RE.search(r["text"])
            or ((r["level"] <= ERR_LEVEL or CORE_WARN_RE.search(r["text"]))
                and DRIVER_RE.search(r["text"]))]


# Lines that close a report: KASAN's rule, the end of a WARN or BUG.
END_RE = re.compile(r"^=+$|---\[ end trace")
REPORT_LINES = 30


def reports(records, limit=REPORT_LINES):
    """The reports around the offending records: each starts at an
    offending record and runs for at most limit records, or up to the line
    that closes it. Offending records inside a report (its Call Trace:)
    start no report of their own. Returns a list of lists of records."""
    out = []
    i = 0
    while i < len(records):
        r = records[i]
        if not offending([r]):
            i += 1
            continue
        block = [r]
        i += 1
        while i < len(records) and len(block) < limit:
            block.append(records[i])
            i += 1
            if END_RE.search(records[i - 1]["text"]):
                break
        out.append(block)
    return out


def leaks(text):
    """/sys/kernel/debug/kmemleak's text as a list of leaks, each a list
    of lines: its "unreferenced object" line, then its details and
    backtrace."""
    out = []
    for line in text.splitlines():
        if line.startswith("unreferenced object"):
            out.append([])
        if out and line.strip():
            out[-1].append(line)
    return out


def format_record(guest, rec):
    return f"[{guest}] <{rec['level']}> {rec['text']}"
