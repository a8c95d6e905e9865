"""Tests of dpsynth.utils._files (atomic writes) and dpsynth.utils._progress."""

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dpsynth.utils._files import Terminated, atomic_write, output_target, raise_on_sigterm
from dpsynth.utils._progress import PROGRESS_KEY, log_progress, muted_progress, progress_logger


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---------------------------------------------------------- atomic_write
def test_atomic_write_creates_the_file_with_normal_permissions(tmp_path):
    target = tmp_path / "new.txt"
    with atomic_write(target) as temporary:
        assert Path(temporary).parent == tmp_path
        assert not target.exists()  # nothing at the target before the end
        Path(temporary).write_text("done")
    assert target.read_text() == "done"
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.txt"]


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt(), SystemExit(3)])
def test_atomic_write_keeps_the_old_file_on_any_error(tmp_path, error):
    target = tmp_path / "out.csv"
    target.write_text("precious")
    with pytest.raises(type(error)):
        with atomic_write(target) as temporary:
            Path(temporary).write_text("half")
            raise error
    assert target.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_atomic_write_needs_an_existing_directory(tmp_path):
    with pytest.raises(OSError):
        with atomic_write(tmp_path / "missing" / "out.csv"):
            pass


def test_sigterm_removes_the_temporary_file(tmp_path):
    """A terminated process leaves neither a half file nor a temporary file."""
    target = tmp_path / "out.csv"
    target.write_text("precious")
    script = textwrap.dedent(f"""
        import sys, time
        from dpsynth.utils._files import atomic_write, raise_on_sigterm
        with raise_on_sigterm():
            with atomic_write({str(target)!r}) as tmp:
                open(tmp, "w").write("half")
                print("ready", flush=True)
                time.sleep(60)
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                               text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        assert len(list(tmp_path.iterdir())) == 2  # the target and the temporary file
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        process.kill()
        process.stdout.close()
    assert target.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_raise_on_sigterm_restores_the_handler():
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated) as info:
        with raise_on_sigterm():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises before this ends
    assert info.value.code == 143
    assert signal.getsignal(signal.SIGTERM) is previous


# ------------------------------------------------------------- progress
def test_log_progress_records(caplog):
    with caplog.at_level(logging.INFO, logger="dpsynth"):
        log_progress(2, 5, "sampling", "sampled 2 of 5 chunks")
    (record,) = caplog.records
    assert record.name == "dpsynth" and record.levelno == logging.INFO
    assert record.getMessage() == "sampled 2 of 5 chunks"
    assert getattr(record, PROGRESS_KEY) == (2, 5, "sampling")
    assert progress_logger() is logging.getLogger("dpsynth")


def test_log_progress_is_silent_by_default(capsys):
    log_progress(1, 1, "x", "not shown")  # INFO: below the last-resort handler
    assert capsys.readouterr() == ("", "")


# ------------------------------------------------ non-regular outputs
def test_atomic_write_writes_through_a_device_node():
    # a rename onto /dev/null would replace the device with a regular file
    before = os.stat(os.devnull)
    with atomic_write(os.devnull) as temporary:
        assert temporary == os.devnull
        with open(temporary, "w") as handle:
            handle.write("discarded")
    after = os.stat(os.devnull)
    assert (after.st_mode, after.st_rdev, after.st_ino) == \
        (before.st_mode, before.st_rdev, before.st_ino)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_atomic_write_writes_through_a_named_pipe(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen([sys.executable, "-c",
                               f"print(open({str(fifo)!r}).read(), end='')"],
                              stdout=subprocess.PIPE, text=True)
    with atomic_write(fifo) as temporary:
        Path(temporary).write_text("through the pipe")
    assert reader.communicate(timeout=60)[0] == "through the pipe"
    assert output_target(fifo)[1] == "stream"


def test_atomic_write_replaces_the_target_of_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.csv"
    target.write_text("old")
    link = tmp_path / "link.csv"
    link.symlink_to(target)
    with atomic_write(link) as temporary:
        assert Path(temporary).parent == tmp_path / "real"  # atomic where the file is
        Path(temporary).write_text("new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new"
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to(tmp_path / "real" / "created.csv")
    with atomic_write(dangling) as temporary:
        Path(temporary).write_text("created")
    assert dangling.is_symlink() and (tmp_path / "real" / "created.csv").read_text() == \
        "created"
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["created.csv",
                                                                      "out.csv"]


def test_output_target_kinds(tmp_path):
    (tmp_path / "file").write_text("x")
    assert output_target(tmp_path / "file") == (str(tmp_path / "file"), "file")
    assert output_target(tmp_path / "new")[1] == "new"
    assert output_target(tmp_path)[1] == "directory"
    assert output_target(os.devnull) == (os.devnull, "stream")


def test_muted_progress_drops_one_task_only(caplog):
    with caplog.at_level(logging.INFO, logger="dpsynth"):
        with muted_progress("sampling"):
            log_progress(1, 1, "sampling", "inner")
            log_progress(1, 2, "marginals", "kept")
        log_progress(1, 2, "sampling", "outer")
    assert [r.getMessage() for r in caplog.records] == ["kept", "outer"]
