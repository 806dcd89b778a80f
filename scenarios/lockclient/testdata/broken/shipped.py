"""Loads the shipped redis-py adapter, which each broken copy here changes in one place."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "adapters", "python"))

import redis_py_adapter as adapter  # noqa: E402,F401
