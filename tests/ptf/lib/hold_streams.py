"""Two P4Runtime clients (a primary and a backup) connect to `nevermiss serve` and hold their
stream channels open; prints `ready`, then, once both streams have ended (the switch stopped),
the code each ended with. Used by crates/nevermiss/tests/ptf.rs (SIGTERM with two clients)."""

import sys
import time

sys.path.insert(0, __file__.rsplit("/", 1)[0])
import nm_p4rt  # noqa: E402

addr, device = sys.argv[1], int(sys.argv[2])
clients = [nm_p4rt.Client(addr, device, election_id=2), nm_p4rt.Client(addr, device, election_id=1)]
print("ready", flush=True)
deadline = time.time() + 20
while time.time() < deadline and any(c.stream_end is None for c in clients):
    time.sleep(0.01)
print(" ".join(str(c.stream_end.name if c.stream_end else "OPEN") for c in clients), flush=True)
