"""A throw-away PostgreSQL server for one run: initdb into the output folder, 127.0.0.1 only.

PostgreSQL refuses to run as root, so when the lab runs as root the server (initdb and
postgres) runs as the unprivileged user `nobody`, owning only its data and socket folders.
The server listens on 127.0.0.1 on a free port and on a unix socket in the output folder,
with password (SCRAM) authentication for the one role it has. Standard library only.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import stat
import subprocess
import tempfile
from pathlib import Path

from labkit.procs import Child, LabError, free_port

ROLE = "lab"
DATABASE = "contextforge"


def bin_dir() -> Path:
    """The folder of the server binaries: $LAB_PG_BIN, or the newest /usr/lib/postgresql/N/bin."""
    if os.environ.get("LAB_PG_BIN"):
        folder = Path(os.environ["LAB_PG_BIN"])
        if not (folder / "initdb").exists():
            raise LabError(f"postgres: LAB_PG_BIN={folder} has no initdb")
        return folder
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if not candidates:
        found = shutil.which("initdb")
        if found:
            return Path(found).parent
        raise LabError("postgres: no PostgreSQL server binaries (initdb) found; install postgresql or set LAB_PG_BIN")
    return candidates[-1].parent


def _reachable_by(folder: Path, user: pwd.struct_passwd) -> bool:
    """Whether `user` may traverse every folder from / down to `folder`."""
    for path in (folder, *folder.parents):
        mode = path.stat()
        if mode.st_uid == user.pw_uid:
            bit = stat.S_IXUSR
        elif mode.st_gid == user.pw_gid:
            bit = stat.S_IXGRP
        else:
            bit = stat.S_IXOTH
        if not mode.st_mode & bit:
            return False
    return True


class Postgres:
    """One PostgreSQL server in `folder` (data, socket, log), started with `start()`, stopped with `stop()`."""

    def __init__(self, lab, system: str, folder: Path) -> None:
        self.lab = lab
        self.system = system
        self.bin = bin_dir()
        self.folder = folder
        self.as_user = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
        home = folder
        if self.as_user is not None and not _reachable_by(folder, self.as_user):
            # nobody cannot get to the output folder (e.g. it is under /root): a folder of its own.
            home = Path(tempfile.mkdtemp(prefix="retrace-lab-postgres-"))
            home.chmod(0o755)
            lab.log(f"{system}: {folder} is not reachable by user nobody; PostgreSQL runs in {home}")
        self.home = home
        self.data = home / "pgdata"
        self.sockets = home / "pgsocket"
        self.port = free_port()
        self.password = secrets.token_hex(16)
        self.child: Child | None = None

    @property
    def url(self) -> str:
        """The SQLAlchemy URL ContextForge takes (psycopg 3 driver)."""
        return f"postgresql+psycopg://{ROLE}:{self.password}@127.0.0.1:{self.port}/{DATABASE}"

    def _demote(self) -> dict:
        """Popen arguments that run a server binary as `nobody` when we are root."""
        if self.as_user is None:
            return {}
        return {"user": self.as_user.pw_uid, "group": self.as_user.pw_gid, "extra_groups": []}

    def _client_env(self) -> dict[str, str]:
        return {
            **os.environ,
            "PGPASSWORD": self.password,
            "PGHOST": "127.0.0.1",
            "PGPORT": str(self.port),
            "PGUSER": ROLE,
        }

    def start(self) -> None:
        """initdb, start the server, create the database."""
        for folder in (self.data, self.sockets):
            folder.mkdir(parents=True)
            if self.as_user is not None:
                os.chown(folder, self.as_user.pw_uid, self.as_user.pw_gid)
        password_file = self.sockets / "pwfile"
        password_file.write_text(self.password + "\n")
        if self.as_user is not None:
            os.chown(password_file, self.as_user.pw_uid, self.as_user.pw_gid)
        self._run(
            [
                str(self.bin / "initdb"),
                "-D",
                str(self.data),
                "-U",
                ROLE,
                f"--pwfile={password_file}",
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            "initdb",
            demote=True,
        )
        password_file.unlink()
        argv = [
            str(self.bin / "postgres"),
            "-D",
            str(self.data),
            "-p",
            str(self.port),
            "-c",
            "listen_addresses=127.0.0.1",
            "-c",
            f"unix_socket_directories={self.sockets}",
            "-c",
            "fsync=off",
            "-c",
            "full_page_writes=off",
        ]
        self.child = self.lab.procs.start(
            f"{self.system} postgres",
            argv,
            self.folder / "postgres.log",
            ports=(self.port,),
            popen_extra=self._demote(),
        )
        self.lab.procs.wait_listening(self.child, 60, f"{self.system}: start postgres")
        self._run([str(self.bin / "createdb"), DATABASE], "createdb")

    def dump(self, out: Path) -> None:
        """pg_dump the database as plain SQL, without owners and privileges."""
        self._run(
            [str(self.bin / "pg_dump"), "--no-owner", "--no-privileges", "--dbname", DATABASE, "--file", str(out)],
            "pg_dump",
        )

    def stop(self) -> None:
        """Fast shutdown (SIGINT), then remove the data folder."""
        if self.child is not None:
            self.lab.procs.stop(self.child, sig=signal.SIGINT, grace_s=30)
            self.child = None
        shutil.rmtree(self.data, ignore_errors=True)
        shutil.rmtree(self.sockets, ignore_errors=True)
        if self.home != self.folder:
            shutil.rmtree(self.home, ignore_errors=True)

    def _run(self, argv: list[str], step: str, demote: bool = False) -> None:
        try:
            done = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                timeout=120,
                env=self._client_env(),
                **(self._demote() if demote else {}),
            )
        except subprocess.TimeoutExpired:
            raise LabError(f"{self.system}: {step} timed out") from None
        if done.returncode != 0:
            output = done.stdout[-2000:] + done.stderr[-2000:]
            raise LabError(f"{self.system}: {step} failed ({done.returncode})\n{output}")
