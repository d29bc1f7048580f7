#!/usr/bin/env python3
"""check_docs.py: the documentation's references resolve, and docs/settings.md lists every setting.

  check_docs.py links ROOT      every Markdown link target and every repository path named in
                                README.md, docs/*.md, bench/NOTES.md, bench/notes/*.md and
                                bench/results/README.md exists; a result file cited as
                                `<commit>:bench/results/...` exists in that commit (checked when
                                ROOT is a git checkout that has the commit)
  check_docs.py settings ROOT   every "TESSERA_*" name read in src/ appears in docs/settings.md
Exit 1 with one line per problem.
"""
import glob
import os
import re
import subprocess
import sys

PATH = re.compile(r"(?<![\w/.:-])((?:bench|docs|src|tests|scripts|cmake)/[A-Za-z0-9_./{},*<>-]*[A-Za-z0-9_*}>/])")
HIST = re.compile(r"\b([0-9a-f]{7,40}):(bench/results/[A-Za-z0-9_./{},*<>-]*[A-Za-z0-9_*}>])")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def expand(p):
    """brace alternatives and <placeholders> as globs"""
    m = re.search(r"\{([^{}]*)\}", p)
    if m:
        out = []
        for alt in m.group(1).split(","):
            out += expand(p[:m.start()] + alt + p[m.end():])
        return out
    return [re.sub(r"<[^>]*>", "*", p)]


def git_paths(root, commit, cache={}):
    if commit not in cache:
        try:
            r = subprocess.run(["git", "-C", root, "ls-tree", "-r", "--name-only", commit, "bench/results"],
                               capture_output=True, text=True, timeout=60)
            cache[commit] = r.stdout.split() if r.returncode == 0 else None
        except (OSError, subprocess.SubprocessError):
            cache[commit] = None
    return cache[commit]


def exists(root, p):
    if p.endswith(">") and "<" not in p:
        p = p[:-1]  # `<... of bench/multi.sh>`
    return all(glob.glob(os.path.join(root, q.rstrip("/"))) or glob.glob(os.path.join(root, q + ".c"))
               for q in expand(p))  # a bench tool built from its .c counts


def check_links(root):
    files = [os.path.join(root, "README.md"), os.path.join(root, "bench", "NOTES.md"),
             os.path.join(root, "bench", "results", "README.md")]
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(root, "bench", "notes", "*.md")))
    bad, n = [], 0
    for f in files:
        here = os.path.dirname(f)
        for ln, line in enumerate(open(f, encoding="utf-8"), 1):
            where = f"{os.path.relpath(f, root)}:{ln}"
            for m in LINK.finditer(line):
                t = m.group(1)
                if re.match(r"[a-z]+:", t):
                    continue
                n += 1
                if not os.path.exists(os.path.normpath(os.path.join(here, t))):
                    bad.append(f"{where}: link target {t} not found")
            hist_spans = []
            for m in HIST.finditer(line):
                hist_spans.append(m.span(2))
                n += 1
                listing = git_paths(root, m.group(1))
                if listing is None:
                    continue  # not a git checkout with that commit: cannot tell
                for q in expand(m.group(2)):
                    rx = re.compile("^" + re.escape(q).replace(r"\*", "[^/]*") + "$")
                    if not any(rx.match(x) for x in listing):
                        bad.append(f"{where}: {m.group(1)}:{q} not in that commit")
            for m in PATH.finditer(line):
                if any(a <= m.start() < b for a, b in hist_spans):
                    continue
                p = m.group(1).rstrip(".")
                if p.startswith("bench/out") or p.startswith("bench/results/<") or "..." in p:
                    continue  # outputs of a run, naming patterns
                n += 1
                if not exists(root, p):
                    bad.append(f"{where}: {p} not found")
    return bad, n


def check_settings(root):
    names = set()
    for f in glob.glob(os.path.join(root, "src", "**", "*.*"), recursive=True):
        if f.endswith((".c", ".h", ".cu", ".cuh")):
            names |= set(re.findall(r'"(TESSERA_[A-Z0-9_]+)"', open(f, encoding="utf-8", errors="replace").read()))
    doc = open(os.path.join(root, "docs", "settings.md"), encoding="utf-8").read()
    bad = []
    for v in sorted(names):
        pre = "TESSERA_BLAS_DISABLE_"
        if v in doc or (v.startswith(pre) and f"`{pre}<R>`" in doc and re.search(rf"\b{v[len(pre):]}\b", doc)):
            continue
        bad.append(f"docs/settings.md: {v} (read in src/) is not listed")
    return bad, len(names)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("links", "settings"):
        sys.exit(__doc__)
    bad, n = (check_links if argv[1] == "links" else check_settings)(argv[2])
    for b in bad:
        print(b)
    print(f"check_docs.py {argv[1]}: {n} checked, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
