# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Tests of the spanprof Python package: python3 -m unittest discover -s tests -t . (from hooks/python)."""
