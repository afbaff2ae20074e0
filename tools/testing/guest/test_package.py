# SPDX-License-Identifier: GPL-2.0
"""The Debian packages (`make deb`, debian/) installed as a user would,
in guest A: dpkg -i, the module built by DKMS and loaded by its alias,
the provider found with no RDMAV_DRIVERS, then dpkg --purge leaving
nothing behind.

Only ever in a guest: its root is an overlay whose lower layer is the
host's / over 9p, read-only twice (QEMU's `-fsdev ...,readonly=on` and
the `ro` mount, tools/testing/bench/guests.py and boot/init), and whose
upper layer is a tmpfs; the guest's /lib/modules is a bind mount of the
work tree's build/guest/modules seen through that overlay (boot/stage2).
So whatever dpkg and DKMS write lands in guest A's memory and is gone
at its next boot. _guard() checks this before anything is installed.

test_provider_package (make check): libsroce alone; `ibv_devices`
without RDMAV_DRIVERS lists the device only while it is installed.

test_dkms_package (full_only: `make package-check`): both packages; DKMS
compiles sroce.ko for the guest's kernel, from the headers of that very
kernel: Debian 12's, which make setup installs on the host (the guest
sees /usr/src through 9p), or for another guest kernel the headers that
scripts/kernel unpacks under build/headers-VERSION. The build-tree
module (extra/sroce.ko, tools/testing/bench/guests.py prepare_modules)
is moved aside first, so that `rdma link add` can only load the one
DKMS installed. Then ib_write_bw from A, on the installed provider and
without RDMAV_DRIVERS, to B, which runs the build-tree module and
provider as in every other test. Compiling under TCG is most of its
time: dpkg -i took 873 s of the test's 959 s (2 vCPUs, a quiet host).

The .debs are build/deb's (`make deb`); the make targets build them first.
"""
import glob
import os
import time

import pytest

from tools.testing.bench.guests import TOP
from tools.testing.bench.lib import perftest as pt

SROCE_ONLY = "installs sroce's own packages"
OUT = os.path.join(TOP, "build", "deb")
PROVIDER = "/usr/lib/x86_64-linux-gnu/libibverbs/libsroce-rdmav34.so"
DRIVER_FILE = "/etc/libibverbs.d/sroce.driver"
# Where the build-tree module and the module indexes wait while the DKMS
# one is tried (in guest A's tmpfs).
ASIDE = "/root/package-test"
# Verbs programs run by the installed libibverbs configuration alone.
NO_ENV = "env -u RDMAV_DRIVERS"


def deb(name):
    """The one build/deb/NAME_*.deb, or fail asking for `make deb`."""
    found = glob.glob(os.path.join(OUT, f"{name}_*.deb"))
    assert len(found) == 1, f"{found or 'no ' + name + ' package'} in {OUT}: run make deb"
    return found[0]


def _guard(g):
    """Commands reach guest A, and what it writes stays there: a file
    made in the guest under the work tree must not appear on the host."""
    assert g.run("hostname").out.strip() == g.hostname
    assert g.run("awk '$2 == \"/\" { print $3 }' /proc/mounts").out.split() == ["overlay"]
    probe = os.path.join(TOP, "build", f".package-probe-{os.getpid()}")
    g.run(f"touch {probe}")
    try:
        assert not os.path.exists(probe), "a guest's write reached the host: stop"
    finally:
        g.run(f"rm -f {probe}")


def sroce_devices(g):
    """The sroce devices `ibv_devices` lists with the installed libibverbs
    configuration only."""
    out = g.run(f"{NO_ENV} ibv_devices").out
    return [line.split()[0] for line in out.splitlines()[2:] if line.strip()]


def leftovers(g, modules=True):
    """What of the packages is still in the guest after the purge: their
    dpkg records, files, DKMS' tree and, if @modules, any sroce.ko (the
    build-tree one is then aside)."""
    find = "; find /lib/modules/ -name 'sroce.ko*'" if modules else ""
    out = g.run(f"dpkg-query -W -f='${{Package}} ${{db:Status-Status}}\\n' "
                f"sroce-dkms libsroce 2>/dev/null; "
                f"ls -d {PROVIDER} {DRIVER_FILE} /usr/src/sroce-* /var/lib/dkms/sroce "
                f"2>/dev/null{find}", check=False).out
    return [line for line in out.splitlines() if line.strip()]


@pytest.mark.sroce(SROCE_ONLY)
def test_provider_package(bench):
    a = bench.a
    lib = deb("libsroce")
    _guard(a)
    bench.attach(a, "sroce0")
    # The control: without the package, only RDMAV_DRIVERS found libsroce.
    assert sroce_devices(a) == [], "libsroce already installed in the guest"
    a.run(f"DEBIAN_FRONTEND=noninteractive dpkg -i {lib}", timeout=120)
    try:
        assert a.run(f"cat {DRIVER_FILE}").out.split() == ["driver", "sroce"]
        assert sroce_devices(a) == ["sroce0"]
    finally:
        a.run("dpkg --purge libsroce", timeout=120)
    assert leftovers(a, modules=False) == [], "left after dpkg --purge"
    assert sroce_devices(a) == []


test_provider_package.TIMEOUT = 300


def headers(abi):
    """The build tree of the guest's kernel, as the host sees it (and so
    the guest, through 9p)."""
    found = [d for d in [f"/usr/src/linux-headers-{abi}"] +
             glob.glob(os.path.join(TOP, "build", "headers-*", "usr", "src",
                                    f"linux-headers-{abi}"))
             if os.path.isfile(os.path.join(d, "Makefile"))]
    assert found, (f"no headers for the guest's kernel {abi}: make setup installs "
                   f"Debian 12's, scripts/kernel VERSION headers unpacks another's")
    return found[0]


def write_bw(bench, dev):
    """ib_write_bw, A (installed provider) to B (the build tree's), 64 KiB;
    a run whose clock calibration failed is made again."""
    a, b = bench.a, bench.b
    sidx, cidx = b.gid_index(dev), a.gid_index(dev)
    for _ in range(1 + pt.CALIBRATION_RETRIES):
        port = pt.next_port()
        srv, _ = pt.perftest_cmds("ib_write_bw", dev, sidx, port, b.ip, size=65536, iters=5)
        _, cli = pt.perftest_cmds("ib_write_bw", dev, cidx, port, b.ip, size=65536, iters=5)
        run = pt.run_pair(b, a, srv, f"{NO_ENV} {cli}", port, timeout=120)
        run.parsed = {side: pt.parse(r.out + r.err) if r else None
                      for side, r in (("client", run.client), ("server", run.server))}
        if not pt.calibration_failed(run):
            break
    problems = pt.judge(run, "ib_write_bw", [65536], 5, gids=(a.ip, b.ip))
    assert not problems, "; ".join(problems) + "\n" + run.text[-3000:]
    return run


def restore(bench, abi):
    """Guest A as it booted: the build-tree module and the module
    indexes back, the packages gone; rebooted if that cannot be."""
    a = bench.a
    mods = f"/lib/modules/{abi}"
    res = a.run(f"dpkg --purge sroce-dkms libsroce >/dev/null 2>&1; "
                f"rm -f {mods}/build; "
                f"if [ -d {ASIDE} ]; then mv {ASIDE}/sroce.ko {mods}/extra/ && "
                f"cp -a {ASIDE}/modules.* {mods}/ && rm -rf {ASIDE}; fi; "
                f"[ \"$(modinfo -n sroce)\" = {mods}/extra/sroce.ko ]",
                timeout=300, check=False)
    if not res.ok:
        bench.reboot(a)


@pytest.mark.sroce(SROCE_ONLY)
@pytest.mark.full_only
@pytest.mark.smp(2)
def test_dkms_package(bench):
    a, b = bench.a, bench.b
    debs = [deb("sroce-dkms"), deb("libsroce")]
    _guard(a)
    abi = a.run("uname -r").out.strip()
    mods = f"/lib/modules/{abi}"
    assert a.run("test -e /sys/module/sroce", check=False).rc == 1, "sroce loaded already"
    try:
        # DKMS builds against /lib/modules/ABI/build, which the stock
        # modules the bench unpacked lack.
        a.run(f"ln -sfn {headers(abi)} {mods}/build")
        # dkms reads <(...): bash's /dev/fd, which udev makes on a real
        # system and the guests' devtmpfs lacks.
        a.run("[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd")
        # DKMS' install and remove run depmod: with the build-tree module
        # aside, its indexes name no other sroce.ko.
        a.run(f"mkdir -p {ASIDE} && mv {mods}/extra/sroce.ko {ASIDE}/ && "
              f"cp -a {mods}/modules.* {ASIDE}/")
        t0 = time.monotonic()
        res = a.run(f"DEBIAN_FRONTEND=noninteractive dpkg -i {' '.join(debs)}",
                    timeout=3000, check=False)
        print(f"dpkg -i with the DKMS build: {time.monotonic() - t0:.0f}s")
        log = a.run("cat /var/lib/dkms/sroce/*/build/make.log", check=False).out
        assert res.ok, f"dpkg -i: rc {res.rc}\n{res.out}{res.err}\n{log[-3000:]}"
        status = a.run("dkms status sroce").out
        assert f", {abi}, x86_64: installed" in status, status + res.out
        ko = a.run("modinfo -n sroce").out.strip()
        assert ko.startswith(f"{mods}/updates/dkms/sroce.ko"), ko

        # Loaded by the kernel (request_module of rdma-link-sroce).
        dev = bench.attach(a, "sroce0")
        assert a.run("test -e /sys/module/sroce", check=False).ok
        bench.attach(b, "sroce0")
        assert sroce_devices(a) == ["sroce0"]
        write_bw(bench, dev)

        bench.detach(a, dev)
        a.run("rmmod sroce")
        a.run("dpkg --purge sroce-dkms libsroce", timeout=300)
        assert leftovers(a) == [], "left after dpkg --purge"
        assert a.run("modinfo sroce", check=False).rc != 0
    finally:
        restore(bench, abi)


test_dkms_package.TIMEOUT = 3600

