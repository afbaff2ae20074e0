# SPDX-License-Identifier: GPL-2.0
"""A guest seen from inside one of its network namespaces."""
import shlex

from ..guests import Guest


class InNetns:
    """guest's commands run in network namespace ns (`ip netns exec`, which
    also mounts the namespace's own /sys, where its RDMA devices are):
    run, spawn, wait_for and gid_index; everything else is the guest's
    (name, addresses, jobs)."""

    def __init__(self, guest, ns):
        self.guest, self.ns = guest, ns

    def __getattr__(self, name):
        return getattr(self.guest, name)

    def _in(self, cmd):
        return f"ip netns exec {self.ns} bash -c {shlex.quote(cmd)}"

    def run(self, cmd, timeout=60, check=True):
        return self.guest.run(self._in(cmd), timeout, check)

    def spawn(self, cmd, timeout=300):
        return self.guest.spawn(f"exec {self._in(cmd)}", timeout)

    # Written in terms of run(): they then look inside the namespace too.
    wait_for = Guest.wait_for
    gid_index = Guest.gid_index
