"""The lab's errors: each is printed by the CLI as one clear line (never a bare traceback)."""


class LabError(Exception):
    """A user-facing error; the CLI prints `nevermiss-lab: error: <message>` and exits 2."""


class SpecError(LabError):
    """An invalid experiment specification; the message names the field and the value."""


class PointFailed(LabError):
    """A run of the nevermiss binary that failed (non-zero exit, timeout, unreadable output)."""

    def __init__(self, message: str, *, exit_code: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr = stderr
