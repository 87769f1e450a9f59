"""The Compare page's report and saved comparisons: "Download report" (one self-contained HTML
file from :func:`fairengine.report.build_report`), "Download comparison" and "Open a saved
comparison" (JSON, :mod:`fairengine.audit.comparison`). The engine builds and validates; this
module collects the page's points, pins and outside models and shows errors in words."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.components.errors import show_error
from dashboard.components.outside_model import SAVED_KEY
from dashboard.components.runner import job_value
from dashboard.components.upload_jobs import comparison_contents, file_cpu_seconds
from fairengine.audit import AuditResult
from fairengine.audit.comparison import (
    Comparison,
    build_comparison,
    save_comparison,
)
from fairengine.audit.core import PLANE
from fairengine.data import Task
from fairengine.frontier import task_key
from fairengine.frontier.result import Frontier, PointRecord
from fairengine.textsafe import md_text

BUILT_KEY = "cmp_export"


def page_comparison(
    task: Task,
    points: Sequence[Any],
    audits: Sequence[AuditResult],
    pins: Sequence[str],
    disparity: tuple[str | None, float] = (None, 0.8),
) -> Comparison:
    """The comparison the page shows: every cached point (a frontier per method, models read
    from their files on use), the outside models (a repeated name gets a suffix) and the pins;
    the disparities against the page's ``disparity`` = (reference group, τ)."""
    train, test = task.split()
    tkey = task_key(train, test)
    by_method: dict[str, list[Any]] = {}
    for point in points:
        by_method.setdefault(point.method, []).append(point)
    frontiers = []
    for method, group in by_method.items():
        knob_names = list(dict.fromkeys(k for p in group for k in p.knobs))
        records = [PointRecord.from_stored(p.key, dict(p.knobs), p) for p in group]
        frontiers.append(Frontier.from_records(method, tkey, records, PLANE[task.kind], knob_names))
    reference, tau = disparity
    return build_comparison(task, frontiers, audits, list(pins), reference=reference, tau=tau)


def render_downloads(
    task: Task,
    points: Sequence[Any],
    audits: Sequence[AuditResult],
    pins: Sequence[str],
    *,
    reference: str | None = None,
    tau: float = 0.8,
) -> None:
    """ "Prepare report" and then "Download report" / "Download comparison" for what is shown,
    its ratios and four-fifths verdicts against group ``reference`` at threshold ``tau``."""
    from fairengine.report import build_report

    named = [
        (a.name, a.threshold, a.metrics.get("test", {}).get(a.fairness_metric)) for a in audits
    ]
    signature = ([p.key for p in points], named, list(pins), reference, tau)
    built = st.session_state.get(BUILT_KEY)
    if built is not None and built["signature"] != signature:
        built = st.session_state[BUILT_KEY] = None
    st.caption(
        "The report is one HTML file that opens in any browser without a server: the data "
        "summary, this plane with every method and your model, the pinned points with their "
        "per-group tables, checks and cards, and the knobs and versions behind every point."
    )
    if built is None and st.button("Prepare the report", key="cmp_prepare_report"):
        try:
            comparison = page_comparison(task, points, audits, pins, (reference, tau))
            built = {
                "signature": signature,
                "html": build_report(comparison, title=f"{task.name}: comparison"),
            }
            with tempfile.TemporaryDirectory() as folder:  # written by the engine's own writer
                path = save_comparison(comparison, Path(folder) / "comparison.json")
                built["json"] = path.read_bytes()
        except Exception as exc:
            show_error(exc, "The report could not be made", "the report")
        st.session_state[BUILT_KEY] = built
    if built is None:
        return
    files = {
        "report": (built["html"].encode("utf-8"), "html", "text/html"),
        "comparison": (built["json"], "json", "application/json"),
    }
    for column, what in zip(st.columns(2), ("report", "comparison"), strict=True):
        data, ext, mime = files[what]
        column.download_button(
            f"Download {what}",
            data=data,
            file_name=f"{task.name}-comparison.{ext}",
            mime=mime,
            key=f"cmp_download_{what}",
            on_click="ignore",
        )


def _opened(upload: Any, task: Task, train: Task, test: Task) -> dict[str, Any] | None:
    """The saved comparison of ``upload``, read and validated for this data in a job once per
    upload and task (None while the job runs, or when the file cannot be opened: then the
    reason is on the page)."""
    found = st.session_state.get(SAVED_KEY)
    if found and found.get("upload") == upload.file_id and found["fingerprint"] == task.fingerprint:
        return found
    key = f"comparison:{upload.file_id}:{task.fingerprint}"
    status, value = job_value(
        "comparison",
        "Opening the comparison",
        key,
        comparison_contents,
        upload.getvalue(),
        train,
        test,
        start=True,
        cpu_seconds=file_cpu_seconds(),
    )
    if status == "error":
        show_error(value, "This comparison cannot be opened", "opening the comparison")
    if status != "done":
        return None
    audits = [AuditResult.from_dict(record) for record in value.pop("outside")]
    found = {"fingerprint": task.fingerprint, "upload": upload.file_id, "audits": audits, **value}
    st.session_state[SAVED_KEY] = found
    return found


def render_open(task: Task, train: Task, test: Task, known: Sequence[str]) -> list[str]:
    """ "Open a saved comparison": validate the file for this data, put its outside models on
    the plane; returns the saved pins that are points of this page (to pin them here)."""
    upload = st.file_uploader(
        "Open a saved comparison (.json)", type=["json"], key="cmp_open_comparison"
    )
    if upload is None:
        st.session_state.pop(SAVED_KEY, None)
        return []
    comparison = _opened(upload, task, train, test)
    if comparison is None:
        return []
    ids, audits, pins = set(comparison["point_ids"]), comparison["audits"], comparison["pins"]
    here = ids & set(known)
    st.success(
        f"Opened a comparison made {md_text(comparison['created'])}: {len(ids)} point(s), "
        f"{len(here)} of them cached here, {len(audits)} outside model(s) (drawn on the plane), "
        f"{len(pins)} pin(s)."
    )
    if len(here) < len(ids):
        st.caption(
            f"{len(ids) - len(here)} saved point(s) are not cached on this machine: add their "
            "methods' frontiers above to see them on the plane."
        )
    return [pin for pin in pins if pin in known]
