"""The hub's login: :class:`RosterAuthenticator`, each student with a password of her own.

Only names on the roster (:class:`dpexplore.hub.roster.Roster`) log in, and only with their own
password (checked against its scrypt hash in a worker thread, so a login costs the hub's event
loop nothing). Names are normalized and checked by :func:`~dpexplore.hub.roster.check_name` (so a
look-alike, an over-long name or ``root`` is refused before anything else). Failed attempts are
throttled per (name, client address): after :attr:`~RosterAuthenticator.free_failures` failures
each further attempt waits twice as long as the one before, up to
:attr:`~RosterAuthenticator.max_lockout` seconds, and answers "wrong name or password" during the
wait without checking the password. Keyed by address as well, a student who guesses at a
classmate's password locks out her own attempts, not the classmate.

A student removed from the roster is logged out at her next request (:meth:`refresh_user`).

Needs ``jupyterhub`` (the ``hub`` extra).
"""
from __future__ import annotations

import asyncio
import time

from jupyterhub.auth import Authenticator
from traitlets import Float, Integer, Unicode

from .roster import Roster, check_name, verify_password

__all__ = ["RosterAuthenticator"]


class RosterAuthenticator(Authenticator):
    """Names and scrypt password hashes from a roster file (``dpexplore hub-users``)."""

    roster_file = Unicode("", config=True,
                          help="the roster: one name:scrypt-hash line per student")
    free_failures = Integer(5, config=True,
                            help="failed logins per (name, address) before attempts are slowed")
    max_lockout = Float(900.0, config=True, help="longest wait between attempts (s)")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._failures: dict[tuple[str, str], tuple[int, float]] = {}
        # the roster is the allow-list: nobody else logs in
        self.any_allow_config = True

    @property
    def roster(self) -> Roster:
        if not self.roster_file:
            raise ValueError("RosterAuthenticator.roster_file is not set")
        return Roster(self.roster_file)

    def normalize_username(self, username):
        try:
            return check_name(username)
        except ValueError:
            return ""  # refused by validate_username: an empty name is never valid

    def validate_username(self, username):
        try:
            return check_name(username) == username
        except ValueError:
            return False

    def check_allowed(self, username, authentication=None):
        return self.roster.get(username) is not None

    def _throttled(self, key) -> bool:
        count, until = self._failures.get(key, (0, 0.0))
        return time.monotonic() < until

    def _failed(self, key) -> None:
        count, _ = self._failures.get(key, (0, 0.0))
        count += 1
        wait = 0.0
        if count > self.free_failures:
            wait = min(self.max_lockout, 2.0 ** (count - self.free_failures))
        self._failures[key] = (count, time.monotonic() + wait)
        if len(self._failures) > 100_000:  # bounded memory whatever a client sends
            self._failures.clear()

    async def authenticate(self, handler, data):
        raw = str(data.get("username", ""))[:200]
        password = str(data.get("password", ""))[:1000]
        try:
            name = check_name(raw)
        except ValueError as err:
            self.log.warning("login refused: %s", err)
            return None
        address = handler.request.remote_ip if handler is not None else ""
        key = (name, address)
        if self._throttled(key):
            self.log.warning("login of %s from %s refused: too many failed attempts", name, address)
            return None
        stored = self.roster.get(name)
        ok = stored is not None and password and await asyncio.to_thread(
            verify_password, password, stored)
        if not ok:
            self._failed(key)
            self.log.warning("failed login of %r from %s", name, address)
            return None
        self._failures.pop(key, None)
        return name

    async def refresh_user(self, user, handler=None):
        """A student taken off the roster is logged out (checked every ``auth_refresh_age``)."""
        return self.roster.get(user.name) is not None
