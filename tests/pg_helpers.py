"""A throwaway PostgreSQL cluster that a test may stop and start again under the arena's parts
(the database outage tests of the API and of the workers)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def _postgres_bin() -> Path:
    """PostgreSQL's programs (Debian's newest, else PATH's); the test fails, saying why, without."""
    for directory in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True,
                            key=lambda d: tuple(int(p) for p in re.findall(r"\d+", d.parent.name))):
        if (directory / "pg_ctl").is_file():
            return directory
    pg_ctl = shutil.which("pg_ctl")
    if pg_ctl is None:
        pytest.fail("PostgreSQL's initdb/pg_ctl not found (looked in /usr/lib/postgresql/*/bin and PATH): "
                    "run ./install.sh (it installs Debian's postgresql package)", pytrace=False)
    return Path(pg_ctl).parent


class Cluster:
    """A throwaway PostgreSQL cluster on a unix socket, that a test may stop and start again."""

    def __init__(self) -> None:
        self.bin = _postgres_bin()
        self.directory = Path(tempfile.mkdtemp(prefix="atout-pgo-"))  # short: a socket path is short
        self.as_user: list[str] = []
        if os.geteuid() == 0:  # initdb and postgres refuse to run as root
            shutil.chown(self.directory, "postgres", "postgres")
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.data, self.log = self.directory / "data", self.directory / "postgres.log"
        self.url = f"postgresql+psycopg://atout@/atout?host={self.directory}"

    def run(self, program: str, *args: str) -> None:
        result = subprocess.run([*self.as_user, str(self.bin / program), *args], stdin=subprocess.DEVNULL,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            raise AssertionError(f"{program} {' '.join(args)} failed:\n{result.stdout}{result.stderr}{log}")

    def create(self) -> None:
        self.run("initdb", "-D", str(self.data), "-U", "atout", "-A", "trust", "-E", "UTF8", "--no-locale",
                 "--no-sync")
        self.start()
        self.run("createdb", "-h", str(self.directory), "-U", "atout", "atout")

    def start(self) -> None:
        options = f"-k {self.directory} -c listen_addresses='' -F"
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o", options,
                 "start")

    def stop(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def remove(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.directory, ignore_errors=True)
