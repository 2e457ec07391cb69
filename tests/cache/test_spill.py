"""Embeddings kept for a call's later steps: in memory to a budget, then on disk, back bit for bit on the device
asked for; a failing disk loses an entry (the caller recomputes it), and a killed run's folder is cleaned up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import torch

from fastbertscore.cache.spill import PREFIX, KeptEmbeddings


def test_past_the_budget_embeddings_spill_and_come_back_bit_for_bit(tmp_path):
    generator = torch.Generator().manual_seed(0)
    tensors = {
        0: torch.randn(7, 384, generator=generator),
        1: torch.randn(3, 5, 16, generator=generator),  # all layers: (T, L + 1, D)
        2: torch.randn(11, 8, generator=generator).to(torch.bfloat16),
    }
    with KeptEmbeddings(memory_bytes=7 * 384 * 4, device="cpu", folder=tmp_path) as kept:
        for u, t in tensors.items():
            kept.put(u, t)
        assert kept.bytes == 7 * 384 * 4 and kept.spilled_bytes == 3 * 5 * 16 * 4 + 11 * 8 * 2
        folders = list(tmp_path.glob(f"{PREFIX}{os.getpid()}-*"))
        assert len(folders) == 1
        for u, t in tensors.items():
            back = kept.get(u)
            assert back.dtype == t.dtype and back.shape == t.shape and torch.equal(back, t)
        kept.drop(1)
        assert kept.get(1) is None
    assert not folders[0].exists()  # closing removes the folder


def test_an_unwritable_folder_loses_the_entry_instead_of_failing(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with KeptEmbeddings(memory_bytes=0, device="cpu", folder=blocked) as kept:
        kept.put(0, torch.ones(2, 3))
        kept.put(1, torch.ones(2, 3))
        assert kept.get(0) is None and kept.lost == 2


def test_a_full_disk_loses_the_entry(tmp_path):
    """A write the OS refuses midway (the file-size limit stands in for a full disk: both fail the write)."""
    script = textwrap.dedent(f"""
        import resource, signal, torch
        from fastbertscore.cache.spill import KeptEmbeddings
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a refused write is an OSError, not a killed process
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
        with KeptEmbeddings(memory_bytes=0, device="cpu", folder={str(tmp_path)!r}) as kept:
            kept.put(0, torch.ones(10))       # 40 bytes: written
            kept.put(1, torch.ones(1000))     # 4000 bytes: past the limit
            assert torch.equal(kept.get(0), torch.ones(10)) and kept.get(1) is None and kept.lost == 1
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
    assert not list(tmp_path.glob(f"{PREFIX}*"))


def test_a_killed_run_leaves_nothing_a_later_run_trips_over(tmp_path):
    script = textwrap.dedent(f"""
        import os, signal, torch
        from fastbertscore.cache.spill import KeptEmbeddings
        kept = KeptEmbeddings(memory_bytes=0, device="cpu", folder={str(tmp_path)!r})
        kept.put(0, torch.ones(100))
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, check=False)
    assert done.returncode == -signal.SIGKILL
    left = list(tmp_path.glob(f"{PREFIX}*"))
    assert len(left) == 1  # the killed run's folder is still there
    with KeptEmbeddings(memory_bytes=0, device="cpu", folder=tmp_path) as kept:
        kept.put(0, torch.zeros(100))  # the next run that spills cleans up and uses a folder of its own
        assert torch.equal(kept.get(0), torch.zeros(100))
        assert not left[0].exists()


def test_a_kept_slice_does_not_hold_its_whole_batch():
    # The encoder hands out each text's embedding as a slice of its batch's output; kept as is, one slice held the
    # whole batch alive while the budget counted only the slice (a 256 MB budget peaked 470 MB above the model).
    batch = torch.randn(64, 40, 384)
    with KeptEmbeddings(memory_bytes=1 << 20, device="cpu") as kept:
        kept.put(0, batch[3, :25])
        back = kept.get(0)
        assert torch.equal(back, batch[3, :25])
        assert back.untyped_storage().nbytes() == 25 * 384 * 4
