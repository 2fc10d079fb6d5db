"""The class roster of a dpexplore hub: who may log in, each with a password of her own.

Standard library only (the command line ``dpexplore hub-users`` uses it without JupyterHub).

* A **name** is checked and normalized by :func:`check_name`: Unicode NFKC, lower case, then
  ASCII letters, digits and ``-`` only, 1 to :data:`MAX_NAME` characters, starting with a letter
  and not ending with ``-`` (a name must be a host label of the student's own origin, and a
  system account ``dpx-<name>``). A look-alike of a classmate's name (a Cyrillic ``а`` for a
  Latin ``a``) is therefore refused, not a second account.
* A **password** is stored only as a salted scrypt hash (:func:`hash_password`,
  ``hashlib.scrypt``, parameters stored with the hash); :func:`verify_password` compares in
  constant time. New passwords are random (:func:`new_password`, 72 bits).
* The **roster file** holds one ``name:hash`` line per student (``#`` comments), mode 0600, written
  atomically. :func:`sync_roster` adds the names of ``DPEXPLORE_HUB_USERS`` that are not on it yet,
  each with a new password, and appends those passwords (the only plain copy) to a 0600 file for
  the operator to hand out.

>>> check_name("  Alice ")
'alice'
>>> check_name("\\u0430lice")  # a Cyrillic a
Traceback (most recent call last):
...
ValueError: name must be ASCII letters, digits and '-' (1 to 28 characters, starting with a letter), got '\u0430lice'
>>> verify_password("s3cret", hash_password("s3cret")), verify_password("guess", hash_password("s3cret"))
(True, False)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import pathlib
import re
import secrets
import tempfile
import unicodedata

__all__ = [
    "MAX_NAME",
    "RESERVED",
    "check_name",
    "hash_password",
    "verify_password",
    "new_password",
    "Roster",
    "sync_roster",
]

#: longest student name: the system account ``dpx-<name>`` stays within Linux's 32 characters
MAX_NAME = 28
_NAME = re.compile(r"[a-z](?:[a-z0-9-]{0,%d}[a-z0-9])?" % (MAX_NAME - 2))
#: names no student may take (the hub's own paths and accounts people expect to be privileged)
RESERVED = frozenset(
    {
        "root",
        "admin",
        "administrator",
        "hub",
        "jupyterhub",
        "api",
        "user",
        "users",
        "services",
        "static",
        "login",
        "logout",
        "nobody",
        "daemon",
        "www-data",
        "operator",
        "system",
        "dpexplore",
    }
)
#: scrypt work factors (about 0.1 s of one core per login on a 2020s machine; passwords are random)
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1


def check_name(name: str) -> str:
    """The normalized student name (NFKC, stripped, lower case), or ``ValueError``.

    >>> check_name("Ben-2")
    'ben-2'
    >>> check_name("root")
    Traceback (most recent call last):
    ...
    ValueError: name 'root' is reserved
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    norm = unicodedata.normalize("NFKC", name).strip().lower()
    if not _NAME.fullmatch(norm):
        shown = name if len(name) <= 40 else name[:40] + "…"
        raise ValueError(
            "name must be ASCII letters, digits and '-' (1 to "
            f"{MAX_NAME} characters, starting with a letter), got {shown!r}"
        )
    if norm in RESERVED:
        raise ValueError(f"name {norm!r} is reserved")
    return norm


def _b64(b: bytes) -> str:
    return base64.b64encode(b).decode("ascii")


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """``scrypt$N$r$p$salt$hash`` (base64) of ``password``: what the roster stores."""
    if not isinstance(password, str) or not password:
        raise ValueError("password must be a non-empty string")
    salt = os.urandom(16) if salt is None else salt
    digest = hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, maxmem=128 * 2**20, dklen=32
    )
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(digest)}"


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches the stored hash (constant-time comparison; a malformed or
    empty stored hash matches nothing)."""
    try:
        kind, n, r, p, salt, digest = stored.split("$")
        if kind != "scrypt":
            return False
        n, r, p = int(n), int(r), int(p)
        if not (2 <= n <= 2**20 and 1 <= r <= 32 and 1 <= p <= 16):
            return False
        want = base64.b64decode(digest, validate=True)
        got = hashlib.scrypt(
            password.encode("utf-8"),
            salt=base64.b64decode(salt, validate=True),
            n=n,
            r=r,
            p=p,
            maxmem=256 * 2**20,
            dklen=len(want),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def new_password() -> str:
    """A random password: 12 characters of the URL-safe alphabet (72 bits)."""
    return secrets.token_urlsafe(9)


class Roster:
    """The roster file: ``{name: password hash}``, read on each call (the operator may edit it
    while the hub runs) and written atomically with mode 0600."""

    def __init__(self, path: os.PathLike | str):
        self.path = pathlib.Path(path)

    def read(self) -> dict[str, str]:
        """``{name: hash}``; a missing file is an empty roster. Lines that are not ``name:hash``
        with a valid name are skipped (a name without a hash cannot log in)."""
        out: dict[str, str] = {}
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return out
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, stored = line.partition(":")
            try:
                out[check_name(name)] = stored.strip()
            except ValueError:
                continue
        return out

    def names(self) -> list[str]:
        return sorted(self.read())

    def get(self, name: str) -> str | None:
        return self.read().get(name)

    def write(self, entries: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = "# dpexplore hub roster: name:scrypt hash (dpexplore hub-users manages it)\n"
        body += "".join(f"{n}:{h}\n" for n, h in sorted(entries.items()))
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".roster-")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(body)
            os.replace(tmp, self.path)
        except BaseException:
            pathlib.Path(tmp).unlink(missing_ok=True)
            raise

    def add(self, names, *, reset: bool = False) -> dict[str, str]:
        """Adds ``names`` (checked) with new passwords; with ``reset``, gives names already on
        the roster a new password too. Returns ``{name: plain password}`` of what changed."""
        entries, out = self.read(), {}
        for raw in names:
            name = check_name(raw)
            if name in entries and not reset:
                continue
            out[name] = new_password()
            entries[name] = hash_password(out[name])
        if out:
            self.write(entries)
        return out

    def set_password(self, name: str, password: str) -> None:
        entries = self.read()
        entries[check_name(name)] = hash_password(password)
        self.write(entries)

    def remove(self, names) -> list[str]:
        entries = self.read()
        gone = [n for n in (check_name(x) for x in names) if entries.pop(n, None) is not None]
        if gone:
            self.write(entries)
        return gone


def sync_roster(roster: Roster, names, passwords_file: os.PathLike | str) -> list[str]:
    """Adds each of ``names`` not yet on ``roster`` with a new password, appending
    ``name password`` lines to ``passwords_file`` (created 0600). Returns the names added.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> r = Roster(d / "roster")
    >>> sync_roster(r, ["ana", "Ben"], d / "new-passwords.txt"), sync_roster(r, ["ana"], d / "p")
    (['ana', 'ben'], [])
    >>> oct((d / "new-passwords.txt").stat().st_mode & 0o777), r.names()
    ('0o600', ['ana', 'ben'])
    """
    added = roster.add(names)
    if added:
        path = pathlib.Path(passwords_file)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            for name, pw in sorted(added.items()):
                f.write(f"{name} {pw}\n")
    return sorted(added)
