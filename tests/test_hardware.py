"""Device facts the budgets are sized from."""

from __future__ import annotations

import os

from fastbertscore import hardware


def test_free_memory_on_the_cpu_is_the_hosts_available_ram():
    free = hardware.free_device_memory("cpu")
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert 0 < free <= total
