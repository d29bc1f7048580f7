#!/usr/bin/env python3
"""check_docs.py: the documentation's references resolve, and docs/settings.md lists every setting.

  check_docs.py links ROOT      every Markdown link target and every repository path named in
                                README.md, docs/*.md, bench/NOTES.md, bench/notes/*.md and
                                bench/results/README.md exists; a result file cited as
                                `<commit>:bench/results/...` exists in that commit (checked when
                                ROOT is a git checkout that has the commit)
  check_docs.py settings ROOT   the table of settings (src/core/ts_settings.def) holds every
                                "TESSERA_*" name of src/ and every name src/ reads through ts_env_*
                                with its type, its "read in" files read it, getenv appears only in
                                the faces and the reader, and docs/settings.md's generated tables
                                equal the table
  check_docs.py settings-write ROOT   rewrites docs/settings.md's generated tables from the table
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


SETTINGS_C = "src/core/ts_settings.c"  # the reader
SETTINGS_DEF = "src/core/ts_settings.def"  # its table
TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|[A-Za-z_][A-Za-z0-9_]*|[(),]')
TYPES = {"TS_SET_STR": "string", "TS_SET_INT": "int", "TS_SET_I64": "int64", "TS_SET_DOUBLE": "number",
         "TS_SET_SIZE": "size", "TS_SET_BOOL": "bool"}
READERS = {"int": "TS_SET_INT", "i64": "TS_SET_I64", "double": "TS_SET_DOUBLE", "size": "TS_SET_SIZE",
           "bool": "TS_SET_BOOL"}
FIELDS = ("layer", "name", "type", "kind", "default", "effect", "read_in", "members")
# Files below the faces that still call getenv until their owners convert them (each a known read
# of a registered name); remove an entry when its file reads through ts_env_*.
GETENV_PENDING = set()


def c_string(tok):
    return bytes(tok[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")


def parse_settings(root):
    """the entries of the table in src/core/ts_settings.def, as dicts of FIELDS, in order"""
    text = open(os.path.join(root, SETTINGS_DEF), encoding="utf-8").read()
    macros = {m.group(1): "".join(c_string(t) for t in re.findall(r'"(?:[^"\\]|\\.)*"', m.group(2)))
              for m in re.finditer(r'#define (\w+)\s+\\?\s*((?:"(?:[^"\\]|\\.)*"\s*\\?\s*)+)', text)}
    body = re.sub(r"#define .*?[^\\]\n", "", text, flags=re.S)
    toks = [t for t in TOKEN.findall(body) if not t.startswith("//")]
    out, i = [], 0
    while i < len(toks):
        if toks[i] in ("TS_SETTING", "TS_FAMILY") and toks[i + 1] == "(":
            args, cur, i = [], [], i + 2
            while toks[i] != ")":
                if toks[i] == ",":
                    args.append(cur)
                    cur = []
                else:
                    cur.append(toks[i])
                i += 1
            args.append(cur)
            vals = []
            for a in args:
                if all(t.startswith('"') for t in a):
                    vals.append("".join(c_string(t) for t in a))
                elif len(a) == 1 and a[0] in TYPES:
                    vals.append(a[0])
                elif len(a) == 1 and a[0] == "NULL":
                    vals.append(None)
                elif len(a) == 1 and a[0] in macros:
                    vals.append(macros[a[0]])
                else:
                    raise SystemExit(f"{SETTINGS_DEF}: cannot read the argument {' '.join(a)}")
            if len(vals) == 7:
                vals.append(None)
            out.append(dict(zip(FIELDS, vals)))
        i += 1
    return out


def family_prefix(name):
    if name.endswith("<R>"):
        return name[:-3]
    if name.endswith("*"):
        return name[:-1]
    return None


def find_setting(entries, name):
    for e in entries:
        pre = family_prefix(e["name"])
        if pre is None:
            if e["name"] == name:
                return e
        elif name.startswith(pre) and (name == pre or e["members"] is None
                                       or name[len(pre):] in e["members"].split()):
            return e  # name == pre: the prefix a family's reader formats its names from
    return None


def render_layer(entries, layer):
    rows = ["| variable | type | default | effect | read in | kind |", "|---|---|---|---|---|---|"]
    for e in entries:
        if e["layer"] != layer:
            continue
        cells = [f"`{e['name']}`", TYPES[e["type"]], e["default"], e["effect"],
                 ", ".join(e["read_in"].split()), e["kind"]]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


BLOCK = re.compile(r"(<!-- generated from src/core/ts_settings.def: (\w+) -->\n)(.*?)(\n<!-- end of generated table -->)",
                   re.S)


def settings_doc(root, entries, write=False):
    path = os.path.join(root, "docs", "settings.md")
    doc = open(path, encoding="utf-8").read()
    layers = list(dict.fromkeys(e["layer"] for e in entries))
    bad, seen = [], []

    def repl(m):
        layer = m.group(2)
        seen.append(layer)
        want = render_layer(entries, layer)
        if m.group(3) != want:
            bad.append(f"docs/settings.md: the table of layer '{layer}' differs from {SETTINGS_DEF} "
                       "(tests/docs/check_docs.py settings-write ROOT rewrites it)")
        return m.group(1) + want + m.group(4)

    new = BLOCK.sub(repl, doc)
    for layer in layers:
        if seen.count(layer) != 1:
            bad.append(f"docs/settings.md: {seen.count(layer)} generated tables of layer '{layer}' (expected 1)")
    if write and new != doc:
        open(path, "w", encoding="utf-8").write(new)
    return bad


def check_settings(root, write=False):
    entries = parse_settings(root)
    bad = []
    for e in entries:
        for f in ("default", "effect"):
            if "|" in e[f] or "\n" in e[f]:
                bad.append(f"{SETTINGS_DEF}: {e['name']}: the {f} must be one line without '|'")
        for f in e["read_in"].split():
            p = os.path.join(root, "src", f)
            if not f.startswith(("core/", "device/", "kernels/", "comm/", "runtime/", "algorithms/", "faces/")):
                if not glob.glob(os.path.join(root, f.rstrip("/"))):
                    bad.append(f"{SETTINGS_DEF}: {e['name']}: read in {f}, which does not exist")
                continue
            key = '"' + (family_prefix(e["name"]) or e["name"] + '"')
            if not os.path.exists(p):
                bad.append(f"{SETTINGS_DEF}: {e['name']}: read in src/{f}, which does not exist")
            elif key not in open(p, encoding="utf-8", errors="replace").read():
                bad.append(f"{SETTINGS_DEF}: {e['name']}: read in src/{f}, which does not name it")
    names = set()
    for f in sorted(glob.glob(os.path.join(root, "src", "**", "*.*"), recursive=True)):
        if not f.endswith((".c", ".h", ".cu", ".cuh")):
            continue
        rel = os.path.relpath(f, root)
        text = open(f, encoding="utf-8", errors="replace").read()
        found = set(re.findall(r'"(TESSERA_[A-Z0-9_]+)', text))
        for fn, name in re.findall(r'\bts_env_(\w+)\("([A-Za-z0-9_]+)"', text):
            found.add(name)
            e = find_setting(entries, name)
            if e and fn in READERS and e["type"] != READERS[fn]:
                bad.append(f"{rel}: ts_env_{fn}(\"{name}\") but the table says {TYPES[e['type']]}")
        names |= found
        if rel.replace(os.sep, "/") == SETTINGS_C or rel.startswith(os.path.join("src", "faces")):
            continue
        if re.search(r"\bgetenv\s*\(", text) and rel.replace(os.sep, "/") not in GETENV_PENDING:
            bad.append(f"{rel}: calls getenv (only the faces and {SETTINGS_C} read the environment)")
    for v in sorted(names):
        if not find_setting(entries, v):
            bad.append(f"{SETTINGS_DEF}: {v} (named in src/) is not in the table of settings")
    bad += settings_doc(root, entries, write)
    return bad, len(entries)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("links", "settings", "settings-write"):
        sys.exit(__doc__)
    if argv[1] == "settings-write":
        bad, n = check_settings(argv[2], write=True)
    else:
        bad, n = (check_links if argv[1] == "links" else check_settings)(argv[2])
    for b in bad:
        print(b)
    print(f"check_docs.py {argv[1]}: {n} checked, {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
