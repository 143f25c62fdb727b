#!/usr/bin/env python3
"""Writes builtin.json: what invoice2data's loader yields for every built-in
template in ../shared/corpus/invoice2data/templates (PyYAML safe_load for
.yml, as invoice2data reads them; json.load for .json).

Run from the repository root:  python3 pkg/template/testdata/yaml11/gen.py
Made with PyYAML 6.0.3 (YAML 1.1 resolvers). The Go test needs no Python.

Per template: every scalar as one line "path<TAB>type<TAB>value" (path: keys
joined by "/", list indexes as [i], non-string keys as type:value; value:
ints in decimal, floats as Python's repr, booleans true/false, None empty,
dates ISO), the SHA-256 of the sorted lines joined by newlines, their count,
and for people the notable ones: every scalar that is not a string, and every
string a YAML 1.2 reader would type (digits, yes/no/on/off, ...).
"""
import datetime
import hashlib
import json
import os
import re
import sys

import yaml

ROOT = os.path.join("..", "shared", "corpus", "invoice2data", "templates")
NOTABLE = re.compile(r"^(?:[-+]?[0-9][0-9_.:eE+-]*|\.[0-9].*|y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|~|null|Null|NULL|\.inf|\.nan)$")


def kind(v):
    if isinstance(v, bool):
        return "bool", "true" if v else "false"
    if v is None:
        return "null", ""
    if isinstance(v, int):
        return "int", str(v)
    if isinstance(v, float):
        return "float", repr(v)
    if isinstance(v, datetime.datetime):
        return "datetime", v.isoformat()
    if isinstance(v, datetime.date):
        return "date", v.isoformat()
    if isinstance(v, str):
        return "str", v
    raise TypeError(type(v))


def walk(v, path, out):
    if isinstance(v, dict):
        for k, e in v.items():
            t, s = kind(k)
            walk(e, path + "/" + (s if t == "str" else t + ":" + s), out)
    elif isinstance(v, list):
        for i, e in enumerate(v):
            walk(e, "%s[%d]" % (path, i), out)
    else:
        t, s = kind(v)
        out.append((path, t, s))


def main():
    result = {}
    for dirpath, _, files in os.walk(ROOT):
        for name in sorted(files):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, ROOT).replace(os.sep, "/")
            with open(full, encoding="utf-8") as f:
                if name.endswith(".json"):
                    data = json.load(f)
                else:
                    data = yaml.safe_load(f)
            scalars = []
            walk(data, "", scalars)
            lines = sorted("%s\t%s\t%s" % s for s in scalars)
            digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
            notable = [list(s) for s in scalars if s[1] != "str" or NOTABLE.match(s[2])]
            result[rel] = {"sha256": digest, "scalars": len(lines), "notable": notable}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "builtin.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump(dict(sorted(result.items())), f, ensure_ascii=False, indent=1, sort_keys=False)
        f.write("\n")
    print("%d templates" % len(result), file=sys.stderr)


if __name__ == "__main__":
    main()
