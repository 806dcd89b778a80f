#!/usr/bin/python3
"""Broken: ignores timeout_ms and waits a minute for every reply."""
from shipped import adapter

connect = adapter.connect


def patient(req, *args):
    return connect(dict(req, timeout_ms=60000), *args)


adapter.connect = patient
adapter.main()
