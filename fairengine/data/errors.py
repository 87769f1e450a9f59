"""The one exception type for problems with user data."""

from __future__ import annotations


class DataError(ValueError):
    """A problem with the user's data or the roles chosen for its columns.

    The message always names the column (or file) at fault and says what to do about it in plain
    words, so the dashboard can show it as it is and the CLI can print it without a traceback: it
    names no function, argument or code. What to do in the Python API, when that differs, is in
    :attr:`api_hint` (also added as an exception note, so a traceback shows it).
    """

    def __init__(self, message: str, *, api_hint: str = "") -> None:
        super().__init__(message)
        self.api_hint = api_hint
        if api_hint:
            self.add_note(f"In the Python API: {api_hint}")
