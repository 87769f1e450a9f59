"""What a page test counts as a page's own error or warning box: every box except the result's
held-out checks (dashboard/components/evidence.py), which a result must show when they fail or
warn, whatever else the test checks."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

#: The first words of a check's box (an error for a failed check, a warning for a warned one).
CHECK_PREFIXES = ("**Check failed:**", "**Check warning:**")


def page_errors(at: AppTest) -> list[str]:
    """Error boxes other than failed checks."""
    return [e.value for e in at.error if not e.value.startswith(CHECK_PREFIXES)]


def page_warnings(at: AppTest) -> list[str]:
    """Warning boxes other than warned checks."""
    return [w.value for w in at.warning if not w.value.startswith(CHECK_PREFIXES)]


def evidence_shown(at: AppTest) -> bool:
    """Whether the result's checks (boxes or the "all held" line) and its baselines line are
    on the page."""
    checks = [*at.error, *at.warning, *at.success, *at.caption]
    boxed = any(
        m.value.startswith(CHECK_PREFIXES) or "held on the test rows" in m.value for m in checks
    )
    return boxed and any("Baselines on the same test rows" in c.value for c in at.caption)
