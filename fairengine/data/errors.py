"""The one exception type for problems with user data."""

from __future__ import annotations


class DataError(ValueError):
    """A problem with the user's data or the roles chosen for its columns.

    The message always names the column (or file) at fault and says what to do about it, so the
    dashboard can show it as it is and the CLI can print it without a traceback.
    """
