#!/usr/bin/env python3
"""Precision of safe-mcp scan's CRITICAL and HIGH findings outside test code, from hand-read verdicts.

Usage: precision.py REALWORLD_WORK ADVISORIES_WORK [VERDICTS]
  REALWORLD_WORK / ADVISORIES_WORK: the work folders of `KEEP=1 benches/scan/realworld.sh` and
  `KEEP=1 benches/scan/advisories.sh` (each prints "work folder: ..."). VERDICTS defaults to
  precision-verdicts.tsv beside this script. Prints, per list and overall, the findings, how many
  have a verdict, and the share judged a sink of the rule's class ("class") and reachable by a
  hostile caller past every check ("strict"); then every finding without a verdict.
"""
import csv, json, os, sys

here = os.path.dirname(os.path.abspath(__file__))
real_work, adv_work = sys.argv[1], sys.argv[2]
verdicts_path = sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, "precision-verdicts.tsv")

verdicts = {}
with open(verdicts_path) as handle:
    rows = csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t")
    for row in rows:
        key = (row["list"], row["tree"], row["file"], int(row["line"]), row["rule"])
        verdicts[key] = (row["class"], row["strict"])


def findings(report, tree_root):
    with open(report) as handle:
        data = json.load(handle)
    for finding in data["findings"]:
        if finding.get("context") == "test" or finding["severity"] not in ("CRITICAL", "HIGH"):
            continue
        path = finding["file"]
        relative = path.split(tree_root.rstrip("/") + "/", 1)[-1]
        yield relative, finding["line"], finding["rule_id"]


seen = {"real": [], "adv": []}
for name in sorted(os.listdir(os.path.join(real_work, "ours"))):
    tree = name[: -len(".json")]
    root = os.path.join(real_work, "trees", tree)
    for relative, line, rule in findings(os.path.join(real_work, "ours", name), root):
        seen["real"].append((tree, relative, line, rule))
for tree in sorted(os.listdir(os.path.join(adv_work, "trees")), key=lambda t: int(t.split("-", 1)[0])):
    number = tree.split("-", 1)[0]
    root = os.path.join(adv_work, "trees", tree)
    for relative, line, rule in findings(os.path.join(adv_work, "reports", number + ".json"), root):
        seen["adv"].append((tree, relative, line, rule))


def tally(items, kind):
    judged = [verdicts[(kind,) + item] for item in items if (kind,) + item in verdicts]
    klass = sum(1 for c, _ in judged if c == "yes")
    strict = sum(1 for _, s in judged if s == "yes")
    return len(items), len(judged), klass, strict


def ratio(part, whole):
    return f"{part / whole:.3f}" if whole else "-"


print(f"{'list':<8} {'findings':>8} {'judged':>7} {'class':>6} {'ratio':>6} {'strict':>7} {'ratio':>6}")
totals = [0, 0, 0, 0]
for kind in ("real", "adv"):
    counts = tally(seen[kind], kind)
    totals = [a + b for a, b in zip(totals, counts)]
    n, judged, klass, strict = counts
    print(f"{kind:<8} {n:>8} {judged:>7} {klass:>6} {ratio(klass, judged):>6} {strict:>7} {ratio(strict, judged):>6}")
n, judged, klass, strict = totals
print(f"{'all':<8} {n:>8} {judged:>7} {klass:>6} {ratio(klass, judged):>6} {strict:>7} {ratio(strict, judged):>6}")
for kind in ("real", "adv"):
    for item in seen[kind]:
        if (kind,) + item not in verdicts:
            print("unjudged:", kind, *item)
