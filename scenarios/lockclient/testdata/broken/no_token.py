#!/usr/bin/python3
"""Broken: an acquire's ok reply has no token."""
from shipped import adapter

acquire = adapter.Lock.acquire
adapter.Lock.acquire = lambda self, key, ttl_ms: {"status": acquire(self, key, ttl_ms)["status"]}
adapter.main()
