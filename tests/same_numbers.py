#!/usr/bin/env python3
"""same_numbers.py A B: exit 0 if the two text files agree line by line, numbers to a relative 1e-8."""
import re
import sys

NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def same(x, y):
    if NUM.sub("#", x) != NUM.sub("#", y):
        return False
    return all(abs(float(u) - float(v)) <= 1e-8 * max(abs(float(u)), abs(float(v)), 1e-300) for u, v in zip(NUM.findall(x), NUM.findall(y)))


a, b = (open(f).read().splitlines() for f in sys.argv[1:3])
sys.exit(0 if len(a) == len(b) and all(same(x, y) for x, y in zip(a, b)) else 1)
