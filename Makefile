# SPDX-License-Identifier: GPL-2.0
#
# sroce: the top-level entry points. `make` builds the module against the
# guests' kernel (Debian 12's stock one, whose headers scripts/setup
# installs), never against whatever kernel the build machine runs.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# Debian 12's stock kernel: the headers linux-headers-amd64 depends on (not
# merely the newest installed: bookworm-security also carries 6.12), or any
# tree given as KDIR=.
DEB_ABI := $(shell dpkg-query -W -f='$${Depends}' linux-headers-amd64 2>/dev/null | \
	sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')
KDIR ?= /usr/src/linux-headers-$(DEB_ABI)
# The release KDIR builds for, e.g. 6.1.0-57-amd64.
KVER = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)

# CI builds with warnings as errors.
SROCE_WERROR ?= 0

KBUILD := $(MAKE) -C $(KDIR) M=$(TOP) CONFIG_SROCE=m SROCE_WERROR=$(SROCE_WERROR)

.PHONY: all module provider tools setup demo check kunit sparse checkpatch install uninstall clean \
	bench bench-veth perftest perftest-full engines-full hostile-full faults-full fuzz-full \
	hardening check-debug deb package-check

all: module provider tools

# "+": make recognises a recursive make by $(MAKE) in the recipe itself,
# not through KBUILD, and would leave Kbuild without the jobs of make -jN
# (as DKMS runs it).
module:
	@test -d "$(KDIR)" || { echo "sroce: no kernel headers at '$(KDIR)': run 'make setup' or pass KDIR=" >&2; exit 1; }
	+$(KBUILD) modules

# libsroce, the libibverbs provider: build/libsroce/libsroce-rdmav34.so
provider:
	$(MAKE) -C $(TOP)/tools/libsroce SROCE_WERROR=$(SROCE_WERROR)

# The verbs test programs: build/tools/sroce-*
tools:
	$(MAKE) -C $(TOP)/tools/testing/verbs SROCE_WERROR=$(SROCE_WERROR)

# Installs the build and test dependencies on a Debian 12 machine (root).
setup:
	$(TOP)/scripts/setup

# Build, boot two guests, attach sroce on both and show it working.
demo: setup
	$(MAKE) -C $(TOP) module provider
	$(TOP)/scripts/demo

# Every test: build with -Werror, sparse, checkpatch, KUnit, guest tests.
check: setup
	$(TOP)/scripts/check

kunit:
	$(TOP)/kunit/run

# Which driver the guest targets below test: sroce, or rxe for the baseline.
DRIVER ?= sroce

# sroce against rdma_rxe and TCP, interleaved on the same guests: medians,
# ratios, counters, plots (docs/BENCH.md). BENCH_ARGS= passes options,
# e.g. --rounds 5, --full (MTU 1500 and 9000, every size with -q 4, netem).
bench: module provider
	/usr/bin/python3 $(TOP)/scripts/perf.py $(BENCH_ARGS)

# The same against a veth pair in one guest, a netdev with scatter-gather
# and checksum offload (the guests' link has neither), so that sroce's
# zero-copy transmit and the per-byte costs show: bandwidth, CPU per
# payload GB, tx_zerocopy per packet at 64 KiB and 1 MiB, and iperf3
# (docs/BENCH.md). BENCH_ARGS= as for bench, e.g. --rounds 5.
bench-veth: module provider
	/usr/bin/python3 $(TOP)/scripts/perf.py --veth $(BENCH_ARGS)

# The guest tests run under pytest from the top (pytest.ini, conftest.py).
PYTEST := cd $(TOP) && /usr/bin/python3 -m pytest --driver $(DRIVER)

# The perftest matrix as `make check` runs it (reduced, ~12 min).
perftest: module provider
	$(PYTEST) tools/testing/guest/test_perftest.py

# Every perftest program x connection x IP version x MTU x link/loopback,
# all sizes, 100 iterations of each size for bandwidth and 20 round trips
# for latency: about 80 minutes under TCG (docs/BENCH.md). "default" for
# PERFTEST_ITERS and PERFTEST_LAT_ITERS gives perftest's own counts
# (5000/1000: days). Run it before calling the transport done.
perftest-full: module provider
	export PERFTEST_FULL=1 PERFTEST_ITERS=$${PERFTEST_ITERS:-100} \
		PERFTEST_LAT_ITERS=$${PERFTEST_LAT_ITERS:-20}; \
		$(PYTEST) tools/testing/guest/test_perftest.py

# The engines at full size: UCX's whole matrix, fi_pingpong's sizes,
# Open MPI's job over sroce and then rxe (build/tools/sroce-mpi, from
# tools) and the NVMe-oF fio table (sroce, rxe and nvme-tcp interleaved, 3
# rounds; SROCE_FIO_ROUNDS= for more), tests marked full_only, which make
# check leaves out; about 22 minutes under TCG. -rP prints each passing
# test's figures and the tables (also in build/logs/<run>/nvmeof-table.md
# and mpi-table.md).
engines-full: module provider tools
	$(PYTEST) --full -rP tools/testing/guest/test_engines.py tools/testing/guest/test_fabric.py \
		tools/testing/guest/test_mpi.py tools/testing/guest/test_nvmeof.py

# The hostile local process (tools/testing/verbs/hostile.c) for a minute
# per mode on SMP guests (test_hostile.py's full_only tests), about 10
# minutes under TCG; make check runs each mode for a second. With
# SROCE_GUEST=guest-debug it runs on the debug kernel.
hostile-full: module provider tools
	$(PYTEST) --full tools/testing/guest/test_hostile.py

# Faults under traffic (tools/testing/guest/test_faults.py), with its
# full_only variants: faults held until the traffic ends (an outage of
# every frame both ways, the server's address gone), which must fail the
# QPs, not hang them, and the short faults again under ib_write_bw -D.
# About 3.5 minutes under TCG; make check runs the five short faults
# (about 80 s for the file; docs/HARDENING.md).
faults-full: module provider tools
	$(PYTEST) --full -rP tools/testing/guest/test_faults.py

# 10^6 hostile frames (tools/testing/guest/test_fuzz.py, whose short
# slice make check runs): 10 seeded rounds of 60000 transport frames and
# 3640 of each of the 11 below-transport classes, then sroce-integrity:
# about 32 minutes under TCG.
# SROCE_FUZZ_SEED= picks the first round's seed (docs/HARDENING.md); -s
# shows each round's seed as it starts, and the table at the end (also
# written to build/fuzz-table.md).
fuzz-full: module provider tools
	export SROCE_FUZZ_ROUNDS=$${SROCE_FUZZ_ROUNDS:-10} \
		SROCE_FUZZ_FRAMES=$${SROCE_FUZZ_FRAMES:-60000} \
		SROCE_FUZZ_BELOW=$${SROCE_FUZZ_BELOW:-3640}; \
		$(PYTEST) -s tools/testing/guest/test_fuzz.py

# One run of fuzz-full's 10^6 hostile frames, faults-full's faults under
# traffic and hostile-full's hostile process, then the table of what they
# injected and verified and what the kernel reported (docs/HARDENING.md),
# from the JUnit XML pytest writes: build/hardening/table.md. About 50
# minutes under TCG; fuzz-full's variables size the frames. With
# SROCE_GUEST=guest-debug, on the debug kernel (kmemleak then counts).
HARDENING_TESTS := tools/testing/guest/test_fuzz.py tools/testing/guest/test_faults.py \
	tools/testing/guest/test_hostile.py
hardening: module provider tools
	mkdir -p $(TOP)/build/hardening
	export SROCE_FUZZ_ROUNDS=$${SROCE_FUZZ_ROUNDS:-10} \
		SROCE_FUZZ_FRAMES=$${SROCE_FUZZ_FRAMES:-60000} \
		SROCE_FUZZ_BELOW=$${SROCE_FUZZ_BELOW:-3640}; \
		$(PYTEST) --full -o junit_family=xunit1 \
			--junitxml=$(TOP)/build/hardening/junit.xml $(HARDENING_TESTS); \
		rc=$$?; cd $(TOP) && /usr/bin/python3 -m tools.testing.bench.lib.hardening \
		build/hardening/junit.xml build/hardening/table.md && exit $$rc

# The guest tests on guests booting a debug kernel (KASAN, lockdep, kmemleak,
# debug objects, lockup detectors: scripts/debug.config), built once from
# linux-source-6.1 (tens of minutes on 2 cores); any report fails its test.
# Not part of `make check`. DEBUG_TESTS= picks test files or -k NAME;
# SROCE_TIME_SCALE= how much longer than on the stock kernel a guest may take.
DEBUG_TESTS ?= tools/testing/guest
check-debug: module provider tools
	$(TOP)/scripts/kernel debug guest
	export SROCE_GUEST=guest-debug SROCE_TIME_SCALE=$${SROCE_TIME_SCALE:-4}; \
		$(PYTEST) -v $(DEBUG_TESTS)

sparse:
	@test -d "$(KDIR)" || { echo "sroce: no kernel headers at '$(KDIR)'" >&2; exit 1; }
	$(KBUILD) C=2 modules

checkpatch:
	$(TOP)/scripts/checkpatch

# For a real machine running the kernel KDIR belongs to, never the bench.
install: module provider tools
	$(KBUILD) modules_install
	depmod -a $(KVER)
	$(MAKE) -C $(TOP)/tools/libsroce install

uninstall:
	rm -f /lib/modules/$(KVER)/updates/sroce.ko /lib/modules/$(KVER)/extra/sroce.ko
	depmod -a $(KVER)
	$(MAKE) -C $(TOP)/tools/libsroce uninstall

# Debian packages from this tree into build/deb/ (scripts/deb): sroce-dkms
# (the module's sources, built by DKMS for each kernel with headers) and
# libsroce (the provider), checked by lintian. For machines that run sroce,
# never the bench's host.
deb: setup
	$(TOP)/scripts/deb

# The packages installed in guest A, the module built there by DKMS, used
# and purged (tools/testing/guest/test_package.py with --full: DKMS
# compiles under TCG for about 15 minutes, which make check cannot afford).
package-check: deb module provider
	$(PYTEST) --full tools/testing/guest/test_package.py

# Not Kbuild's own clean: for an external module it deletes every *.ko and
# *.o below the module's directory, build/ included (the guests' kernel
# modules, the KUnit tree).
clean:
	rm -f $(TOP)/sroce.ko $(TOP)/sroce.o $(TOP)/sroce.mod $(TOP)/sroce.mod.c \
		$(TOP)/sroce.mod.o $(TOP)/Module.symvers $(TOP)/modules.order \
		$(TOP)/.sroce.*.cmd $(TOP)/.Module.symvers.cmd $(TOP)/.modules.order.cmd
	find $(TOP)/drivers $(TOP)/kunit \( -name '*.o' -o -name '.*.cmd' -o -name '*.o.d' \) -delete
	$(MAKE) -C $(TOP)/tools/libsroce clean
	$(MAKE) -C $(TOP)/tools/testing/verbs clean
