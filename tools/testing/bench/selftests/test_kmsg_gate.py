"""Host-side unit tests of the kernel log gate:
/usr/bin/python3 -m pytest tools/testing/bench"""
import unittest

from tools.testing.bench.kmsg_gate import format_record, leaks, offending, reports


def rec(text, level=6):
    return {"level": level, "text": text}


class GateTest(unittest.TestCase):
    def test_clean_log_passes(self):
        records = [rec("virtio_net virtio1 eth0: renamed"),
                   rec("rdma_rxe: loaded"),
                   rec("sroce: sroce0 attached to eth0", 6),
                   rec("sroce: slow path taken", 4),
                   rec("some other driver: error", 3)]
        self.assertEqual(offending(records), [])

    def test_generic_patterns_fail_at_any_level(self):
        lines = [
            "WARNING: CPU: 0 PID: 1 at drivers/x.c:10 f+0x1/0x2",
            "BUG: unable to handle page fault for address: 0000",
            "Oops: 0000 [#1] PREEMPT SMP NOPTI",
            "general protection fault, probably for non-canonical address",
            "refcount_t: underflow; use-after-free.",
            "list_del corruption, ffff8880.next is LIST_POISON1",
            "list_add corruption. prev->next should be next",
            "INFO: task rdma:123 blocked for more than 60 seconds.",
            "WARNING: possible circular locking dependency detected",
            "inconsistent lock state",
            "lockdep: fixing up alternatives",
            "BUG: KASAN: use-after-free in sroce_poll",
            "UBSAN: shift-out-of-bounds in drivers/x.c:3:4",
            "kernel BUG at drivers/x.c:42!",
            "Call Trace:",
            "unregister_netdevice: waiting for eth0 to become free. Usage count = 2",
            "WARNING: suspicious RCU usage",
            "BUG: sleeping function called from invalid context at mm/slab.h:1",
            "ODEBUG: free active (active state 0) object: ffff8880 object type: timer_list",
            "kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
            "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
            "rcu: INFO: rcu_preempt self-detected stall on CPU",
        ]
        for line in lines:
            with self.subTest(line=line):
                self.assertEqual(offending([rec(line, 7)]), [rec(line, 7)])

    def test_driver_errors_fail_only_at_err_or_worse(self):
        for level in range(0, 4):
            with self.subTest(level=level):
                self.assertTrue(offending([rec("sroce: planted error", level)]))
        for level in range(4, 8):
            with self.subTest(level=level):
                self.assertFalse(offending([rec("sroce: planted error", level)]))
        # ib_core speaking about a sroce device counts too.
        self.assertTrue(offending([rec("infiniband sroce0: Couldn't open port 1", 3)]))
        # And its warning that a verb of ours failed, at its own level.
        self.assertTrue(offending([rec("infiniband sroce1: ib_query_port failed (-19)", 4)]))
        self.assertFalse(offending([rec("infiniband rxe0: ib_query_port failed (-19)", 4)]))

    def test_case_and_partial_words(self):
        # The patterns are case-sensitive as the kernel prints them.
        self.assertFalse(offending([rec("warning: not a kernel splat"),
                                    rec("oops-free run")]))

    def test_order_is_kept_and_only_bad_returned(self):
        records = [rec("ok 1"), rec("Call Trace:"), rec("ok 2"),
                   rec("sroce: boom", 2), rec("ok 3")]
        self.assertEqual([r["text"] for r in offending(records)],
                         ["Call Trace:", "sroce: boom"])

    def test_reports_carry_their_stack(self):
        records = [rec("ok 1"), rec("=" * 66),
                   rec("BUG: KASAN: slab-use-after-free in sroce_poll+0x1/0x2"),
                   rec("Read of size 8 at addr ffff8880 by task a/1"),
                   rec("Call Trace:"), rec(" sroce_poll+0x1/0x2 [sroce]"),
                   rec("=" * 66), rec("ok 2"),
                   rec("WARNING: CPU: 0 PID: 1 at x.c:1 f+0x1/0x2"), rec(" g+0x1/0x2"),
                   rec("---[ end trace 0000000000000000 ]---"), rec("ok 3")]
        got = [[r["text"] for r in block] for block in reports(records)]
        self.assertEqual(got, [
            ["BUG: KASAN: slab-use-after-free in sroce_poll+0x1/0x2",
             "Read of size 8 at addr ffff8880 by task a/1", "Call Trace:",
             " sroce_poll+0x1/0x2 [sroce]", "=" * 66],
            ["WARNING: CPU: 0 PID: 1 at x.c:1 f+0x1/0x2", " g+0x1/0x2",
             "---[ end trace 0000000000000000 ]---"]])

    def test_reports_are_bounded(self):
        records = [rec("BUG: soft lockup")] + [rec(f" f{i}+0x1/0x2") for i in range(50)]
        self.assertEqual([len(b) for b in reports(records, limit=30)], [30])
        self.assertEqual(reports([rec("ok")]), [])

    def test_kmemleak_leaks_split(self):
        text = ("unreferenced object 0xffff888004a1c000 (size 64):\n"
                "  comm \"rdma\", pid 300, jiffies 4294937296 (age 12.5s)\n"
                "  backtrace:\n"
                "    [<0000000012345678>] kmalloc_trace+0x26/0x60\n"
                "    [<0000000023456789>] sroce_qp_create+0x1/0x2 [sroce]\n"
                "unreferenced object 0xffff888004a1d000 (size 32):\n"
                "  backtrace:\n"
                "    [<0000000012345678>] __kmalloc+0x1/0x2\n")
        got = leaks(text)
        self.assertEqual([len(leak) for leak in got], [5, 3])
        self.assertTrue(got[0][0].startswith("unreferenced object 0xffff888004a1c000"))
        self.assertIn("sroce_qp_create", got[0][4])
        self.assertEqual(leaks(""), [])

    def test_format(self):
        self.assertEqual(format_record("a", rec("sroce: x", 3)), "[a] <3> sroce: x")


if __name__ == "__main__":
    unittest.main()
