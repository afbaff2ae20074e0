# SPDX-License-Identifier: GPL-2.0
#
# sroce: the top-level entry points. `make` builds the module against the
# guests' kernel (Debian 12's stock one, whose headers scripts/setup
# installs), never against whatever kernel the build machine runs.

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))

# The newest Debian amd64 headers installed, or any tree given as KDIR=.
KDIR ?= $(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64)))

# CI builds with warnings as errors.
SROCE_WERROR ?= 0

KBUILD := $(MAKE) -C $(KDIR) M=$(TOP) CONFIG_SROCE=m SROCE_WERROR=$(SROCE_WERROR)

.PHONY: all module setup demo check kunit sparse checkpatch install uninstall clean

all: module

module:
	@test -d "$(KDIR)" || { echo "sroce: no kernel headers at '$(KDIR)': run 'make setup' or pass KDIR=" >&2; exit 1; }
	$(KBUILD) modules

# Installs the build and test dependencies on a Debian 12 machine (root).
setup:
	$(TOP)/scripts/setup

# Build, boot two guests, attach sroce on both and show it working.
demo: setup
	$(MAKE) -C $(TOP) module
	$(TOP)/scripts/demo

# Every test: build with -Werror, sparse, checkpatch, KUnit, guest tests.
check: setup
	$(TOP)/scripts/check

kunit:
	$(TOP)/kunit/run

sparse:
	@test -d "$(KDIR)" || { echo "sroce: no kernel headers at '$(KDIR)'" >&2; exit 1; }
	$(KBUILD) C=2 modules

checkpatch:
	$(TOP)/scripts/checkpatch

# For a real machine running the kernel KDIR belongs to, never the bench.
install: module
	$(KBUILD) modules_install
	depmod -a $(notdir $(patsubst %/,%,$(dir $(KDIR)/)))

uninstall:
	rm -f /lib/modules/*/updates/sroce.ko /lib/modules/*/extra/sroce.ko
	depmod -a

clean:
	@if [ -d "$(KDIR)" ]; then $(KBUILD) clean; fi
