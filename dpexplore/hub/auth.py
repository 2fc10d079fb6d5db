"""The hub's login: :class:`RosterAuthenticator`, each student with a password of her own.

Only names on the roster (:class:`dpexplore.hub.roster.Roster`) log in, and only with their own
password (checked against its scrypt hash in a worker thread, so a login costs the hub's event
loop nothing). Names are normalized and checked by :func:`~dpexplore.hub.roster.check_name` (so a
look-alike, an over-long name or ``root`` is refused before anything else).

Guessing is hopeless by construction (passwords are random, 72 bits), so the throttle guards
the machine and the classmates, not the password, and trusts nothing a client sends (a client
address can be forged with ``X-Real-Ip``; a class behind one NAT shares one):

* a **budget of password checks** for the whole hub (:attr:`~RosterAuthenticator.checks_per_second`,
  with a burst): past it an attempt is refused at once, without the scrypt work;
* **a name's failures slow its next attempts** (after
  :attr:`~RosterAuthenticator.free_failures`, each waits twice as long as the one before, at most
  :attr:`~RosterAuthenticator.max_delay` seconds), but never refuse them: a classmate who guesses
  at her password delays her login by seconds at most, never locks her out;
* nothing is recorded for a name off the roster, and the record is bounded (oldest first out).

A student removed from the roster is logged out at her next request (:meth:`refresh_user`).

Needs ``jupyterhub`` (the ``hub`` extra).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict

from jupyterhub.auth import Authenticator
from traitlets import Float, Integer, Unicode

from .roster import Roster, check_name, verify_password

__all__ = ["RosterAuthenticator"]


class RosterAuthenticator(Authenticator):
    """Names and scrypt password hashes from a roster file (``dpexplore hub-users``)."""

    roster_file = Unicode("", config=True, help="the roster: one name:scrypt-hash line per student")
    free_failures = Integer(5, config=True, help="failed logins of a name before it is slowed")
    max_delay = Float(5.0, config=True, help="longest wait before a slowed attempt (s)")
    checks_per_second = Float(10.0, config=True, help="password checks (scrypt) the hub does per second at most")
    burst = Integer(30, config=True, help="password checks allowed at once above that rate")
    #: names whose failures are remembered at most (oldest forgotten first)
    MAX_NAMES = 10_000
    #: failures older than this are forgotten (s)
    FORGET_AFTER = 900.0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._failures: OrderedDict[str, tuple[int, float]] = OrderedDict()
        self._tokens, self._refilled = float(self.burst), time.monotonic()
        self._last_warning: dict[str, float] = {}
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

    def _warn(self, text: str, *args) -> None:
        """A warning of each kind at most once a second (a flood of attempts does not flood the
        log)."""
        now = time.monotonic()
        if now - self._last_warning.get(text, -1.0) >= 1.0:
            self._last_warning[text] = now
            self.log.warning(text, *args)

    def _take_check(self) -> bool:
        now = time.monotonic()
        self._tokens = min(float(self.burst), self._tokens + (now - self._refilled) * self.checks_per_second)
        self._refilled = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True

    def _delay(self, name: str) -> float:
        count, when = self._failures.get(name, (0, 0.0))
        if time.monotonic() - when > self.FORGET_AFTER:
            return 0.0
        extra = count - self.free_failures
        return 0.0 if extra < 0 else min(self.max_delay, 0.25 * 2.0**extra)

    def _failed(self, name: str) -> None:
        count, when = self._failures.pop(name, (0, 0.0))
        if time.monotonic() - when > self.FORGET_AFTER:
            count = 0
        self._failures[name] = (count + 1, time.monotonic())
        while len(self._failures) > self.MAX_NAMES:
            self._failures.popitem(last=False)

    async def authenticate(self, handler, data):
        raw = str(data.get("username", ""))[:200]
        password = str(data.get("password", ""))[:1000]
        try:
            name = check_name(raw)
        except ValueError as err:
            self._warn("login refused: %s", err)
            return None
        stored = self.roster.get(name)
        if stored is None or not password:
            self._warn("login refused: %r is not on the roster or gave no password", name)
            return None
        delay = self._delay(name)
        if delay:
            self._warn("login of %s slowed by %.2f s after repeated failures", name, delay)
            await asyncio.sleep(delay)
        if not self._take_check():
            self._warn("login of %s refused: too many login attempts on the hub right now", name)
            return None
        if not await asyncio.to_thread(verify_password, password, stored):
            self._failed(name)
            self._warn("failed login of %r", name)
            return None
        self._failures.pop(name, None)
        return name

    async def refresh_user(self, user, handler=None):
        """A student taken off the roster is logged out (checked every ``auth_refresh_age``)."""
        return self.roster.get(user.name) is not None
