#!/usr/bin/python3
"""Broken: replies to an acquire with a bare string, not a JSON object."""
from shipped import adapter

acquire = adapter.Lock.acquire
adapter.Lock.acquire = lambda self, key, ttl_ms: acquire(self, key, ttl_ms)["status"].upper()
adapter.main()
