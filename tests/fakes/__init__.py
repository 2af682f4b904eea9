"""Test doubles shared by the test suites (the fake model server lives here)."""
