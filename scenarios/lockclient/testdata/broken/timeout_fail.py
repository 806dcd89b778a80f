#!/usr/bin/python3
"""Broken: a timed-out acquire is reported as fail, although it may yet run."""
from shipped import adapter
from redis.exceptions import TimeoutError

acquire = adapter.Lock.acquire


def definite(self, key, ttl_ms):
    try:
        return acquire(self, key, ttl_ms)
    except TimeoutError as e:
        return {"status": "fail", "error": str(e)}


adapter.Lock.acquire = definite
adapter.main()
