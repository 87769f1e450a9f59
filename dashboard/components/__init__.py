"""Widgets, cached engine calls and charts shared by the dashboard pages."""
