#!/usr/bin/env python3
"""The README's options table against -help: every option in one table, with the default -help reports.

    check_readme_options.py README.md HELP_TEXT_FILE...

The table is the Markdown table under "## Options" whose first column names `-mat_...` options; it must be one
table (a blank line inside it ends it, and the rows after it render as text). Every `-mat_<format|gpumat>_...`
option that -help lists (and aijcusparse's `-mat_cusparse_...` keys our types read) must have a row whose default (the first word of the second column) equals -help's
current value, and every row must name an option -help lists. Prints PASS/FAIL lines.
"""
import os
import re
import sys

HELP = re.compile(r"^\s+(-mat_(?:ellr|cmrs|rgcsr|csr|auto|gpumat|cusparse)_\w+):? <now ([^ :>]+)")
ROW = re.compile(r"^\|\s*`(-mat_\w+)[^`]*`(?:,\s*`(-mat_\w+)[^`]*`)*\s*\|\s*([^|]*)\|")


def readme_table(path):
    lines = open(path).read().split("\n")
    start = lines.index("## Options")
    rows, in_table, tables = {}, False, 0
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("| `-mat_"):
            if not in_table:
                tables += 1
            in_table = True
            names = re.findall(r"`(-mat_\w+)", line.split("|")[1])
            default = line.split("|")[2].strip().split()[0].strip("`")
            defaults = [d.strip() for d in line.split("|")[2].split(",")]
            for i, n in enumerate(names):  # "0 (auto...), 1" gives each name its own default
                d = defaults[i].split()[0] if i < len(defaults) and len(names) > 1 else default
                rows[n] = d.strip("`")
        elif in_table and line.startswith("|"):
            continue
        else:
            in_table = False
    return rows, tables


def norm(v):
    v = v.lower().rstrip(".")
    return {"true": "true", "false": "false"}.get(v, v)


def main():
    rows, tables = readme_table(sys.argv[1])
    helped = {}
    for f in sys.argv[2:]:
        for line in open(f):
            m = HELP.match(line)
            if m:
                helped[m.group(1)] = m.group(2)
    fails = 0

    def check(ok, what):
        nonlocal fails
        print(("PASS: " if ok else "FAIL: ") + what)
        fails += not ok

    check(tables == 1, f"the README's options table is one table ({tables} found: a blank line splits it)")
    for name, value in sorted(helped.items()):
        check(name in rows, f"{name} (in -help) has a row in the README's options table")
        if name in rows:
            check(norm(rows[name]) == norm(value), f"{name}: README default '{rows[name]}', -help '{value}'")
    for name in sorted(rows):
        check(name in helped, f"{name} (in the README) is listed by -help")
        if name not in helped:  # the help texts' lines of its family, to tell a missing option from a garbled line
            family = name[: name.rindex("_") + 1]
            for f in sys.argv[2:]:
                lines = [line.rstrip() for line in open(f, errors="replace") if family in line]
                for line in lines[:5]:
                    print(f"  {f}: {line}")
    if fails:  # what the programs wrote on stderr (run.sh keeps it beside each help text): a crash shows here
        for f in sys.argv[2:]:
            err = f[: -len(".txt")] + ".err" if f.endswith(".txt") else None
            if err and os.path.exists(err) and os.path.getsize(err):
                print(f"stderr of {f}:\n" + open(err, errors="replace").read().rstrip())
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
