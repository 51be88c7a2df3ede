"""What the client scripts share (tests/clients/*.py, run by crates/nevermiss/tests/clients.rs;
the script's own directory is on sys.path, so `from checks import check` finds this file)."""

import os
import sys


def check(cond, what):
    """Prints `ok: WHAT`, or `FAILED: WHAT` and exits 1 at once: the clients' stream threads
    (p4runtime-shell's is not a daemon) must not keep a failed script alive."""
    if not cond:
        print("FAILED:", what, file=sys.stderr, flush=True)
        os._exit(1)
    print("ok:", what, flush=True)
