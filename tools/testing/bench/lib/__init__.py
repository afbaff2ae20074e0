# SPDX-License-Identifier: GPL-2.0
"""What the guest tests share: perftest and pingpong runs and their
judges, hand-built RoCEv2 frames, RDMA counters. A test imports these,
never another test."""
