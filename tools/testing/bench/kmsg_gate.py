"""The kernel log gate: which kmsg records make a test fail."""
import re

# Generic signs of a kernel problem, whatever the subsystem.
BAD_PATTERNS = [
    r"WARNING:", r"BUG:", r"Oops", r"general protection", r"refcount_t:",
    r"list_del corruption", r"list_add corruption", r"INFO: task .* blocked",
    r"possible circular locking", r"inconsistent lock state", r"lockdep",
    r"KASAN", r"UBSAN", r"kernel BUG", r"Call Trace", r"unregister_netdevice: waiting",
]
BAD_RE = re.compile("|".join(BAD_PATTERNS))
# Errors (level 0..3) about the driver or its devices, from it or from ib_core.
ERR_LEVEL = 3
DRIVER_RE = re.compile(r"sroce")


def offending(records):
    """Return the records (dicts with "level" and "text") that fail the gate,
    in their original order."""
    return [r for r in records
            if BAD_RE.search(r["text"])
            or (r["level"] <= ERR_LEVEL and DRIVER_RE.search(r["text"]))]


def format_record(guest, rec):
    return f"[{guest}] <{rec['level']}> {rec['text']}"
