"""``dpexplore hub-users``: the class roster and the accounts the hub made.

::

    dpexplore hub-users add ana ben        # new names; prints each one's new password, once
    dpexplore hub-users reset ana          # a new password for ana (her old one stops working)
    dpexplore hub-users list               # the roster, and which names have an account
    dpexplore hub-users remove ben         # off the roster; with root, ben's account and home too
    dpexplore hub-users prune              # removes every account the hub made for a name no
                                           # longer on the roster (as root)

The roster is ``--roster PATH``, else ``$DPEXPLORE_HUB_ROSTER``, else ``roster`` in the hub's state
folder (``$DPEXPLORE_HUB_DIR``, default ``/var/lib/dpexplore-hub`` as root). Standard library only;
removing accounts needs root (``userdel``). A running hub reads the roster at each login: no
restart is needed, and a removed student is logged out within five minutes.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import pwd
import sys

from .roster import Roster
from .state import default_state_dir

__all__ = ["add_parser", "run", "roster_path"]


def roster_path(arg: str | None = None) -> pathlib.Path:
    if arg:
        return pathlib.Path(arg)
    if os.environ.get("DPEXPLORE_HUB_ROSTER"):
        return pathlib.Path(os.environ["DPEXPLORE_HUB_ROSTER"])
    state = os.environ.get("DPEXPLORE_HUB_DIR") or default_state_dir()
    return pathlib.Path(state) / "roster"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "hub-users",
        help="the class roster of a dpexplore hub",
        description="Manage the roster (names and passwords) of a dpexplore hub and the system accounts it made.",
    )
    p.add_argument(
        "--roster",
        default=None,
        metavar="PATH",
        help="the roster file (default: $DPEXPLORE_HUB_ROSTER, else $DPEXPLORE_HUB_DIR/roster)",
    )
    p.add_argument("action", choices=["add", "reset", "list", "remove", "prune"])
    p.add_argument("names", nargs="*", metavar="NAME")


def _remove_account(name: str) -> str:
    from .spawner import account_name, hub_accounts, remove_account

    account = account_name(name)
    if account not in hub_accounts():
        return "no account"
    if os.geteuid() != 0:
        return f"account {account} kept (removing it needs root)"
    return f"account {account} removed" if remove_account(account) else f"account {account} kept"


def run(args: argparse.Namespace) -> int:
    roster = Roster(roster_path(args.roster))
    try:
        if args.action in ("add", "reset"):
            if not args.names:
                print(f"dpexplore hub-users {args.action}: name at least one student", file=sys.stderr)
                return 2
            if args.action == "reset":
                missing = sorted(set(args.names) - set(roster.names()))
                if missing:
                    print(f"not on the roster: {', '.join(missing)}", file=sys.stderr)
                    return 2
            changed = roster.add(args.names, reset=args.action == "reset")
            for name, password in sorted(changed.items()):
                print(f"{name} {password}")
            if not changed:
                print("nothing to add: every name is on the roster already", file=sys.stderr)
            return 0
        if args.action == "list":
            from .spawner import account_name

            accounts = {e.pw_name for e in pwd.getpwall()}
            for name in roster.names():
                has = account_name(name) in accounts
                print(f"{name}\t{'account ' + account_name(name) if has else 'no account yet'}")
            return 0
        if args.action == "remove":
            for name in roster.remove(args.names) or []:
                print(f"{name}: off the roster; {_remove_account(name)}")
            return 0
        if args.action == "prune":
            from .spawner import account_name, hub_accounts

            keep = {account_name(n) for n in roster.names()}
            for account in hub_accounts():
                if account not in keep:
                    from .spawner import remove_account

                    ok = os.geteuid() == 0 and remove_account(account)
                    print(f"{account}: {'removed' if ok else 'kept (needs root)'}")
            return 0
    except ValueError as err:
        print(f"dpexplore hub-users: {err}", file=sys.stderr)
        return 2
    return 2
