"""The CLI's output read by a program that stops reading (``papersift stats | head -1``):
the command ends quietly, as Unix tools do, not with a BrokenPipeError traceback."""

from __future__ import annotations

import subprocess
import sys

from papersift.core.config import Config


def test_output_to_a_closed_pipe_ends_quietly(built_config: Config) -> None:
    argv = [sys.executable, "-m", "papersift", "stats",
            "--config", str(built_config.base_dir / "config.toml")]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the command has printed anything: its first write fails
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1
    assert "Traceback" not in err and "BrokenPipe" not in err, err
