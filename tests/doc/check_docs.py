"""Checks the manuals against the programs (issue 21, item 3).

The programs are the one source: the commands, usage lines and options come
from 'matrix --help' and 'matrix help CMD', the engine's flags from
'matrix-engine --help', and the recipe keys, their fixed values, the factors
and their levels from the recipe loader itself, asked with probe recipes
('matrix expand' on a recipe with an unknown key 'zzprobe' in each mapping
answers with the keys that mapping accepts). Each is checked against
doc/matrix.1, doc/matrix-engine.1, doc/matrix-recipe.5 and doc/recipe.md,
both ways. Every mismatch is one line naming the option or key, the file that
lacks it (or has it and should not) and where it comes from; the exit status
is 1 when there is any.

Usage: check_docs.py [--list]   (environment: MATRIX, MATRIX_ENGINE, top_srcdir)
--list prints what the programs say (keys, values, factors, levels) and exits.
"""
import os
import re
import subprocess
import sys
import tempfile

MATRIX = os.environ["MATRIX"]
ENGINE = os.environ["MATRIX_ENGINE"]
SRC = os.environ["top_srcdir"]
PROBE = "zzprobe"
problems = []


def problem(msg):
    problems.append(msg)


def run(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.stdout, p.stderr


# ---- roff ---------------------------------------------------------------------

def deroff(line):
    """The text of a roff line without escapes (fonts, \\-, \\e, \\&)."""
    line = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\c", "", line)
    line = line.replace("\\-", "-").replace("\\e", "\\").replace("\\(em", "--")
    return line


def roff_sections(path):
    """{section title: [lines]} for .SH and .SS headings (titles de-roffed,
    quotes dropped); a .SS subsection's lines are also its .SH's."""
    secs, sh, ss = {}, None, None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = deroff(raw.rstrip("\n"))
            if line.startswith(".\\\""):
                continue
            m = re.match(r"\.(SH|SS)\s+(.*)", line)
            if m:
                title = m.group(2).strip().strip('"')
                if m.group(1) == "SH":
                    sh, ss = title, None
                else:
                    ss = title
                secs.setdefault(title, [])
                continue
            for t in (sh, ss):
                if t is not None:
                    secs[t].append(line)
    return secs


def roff_entries(lines):
    """[(term line, body text)] of the .TP entries in lines."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith(".TP") and i + 1 < len(lines):
            term, body, j = lines[i + 1], [], i + 2
            while j < len(lines) and not lines[j].startswith((".TP", ".SH", ".SS", ".PP")):
                body.append(lines[j])
                j += 1
            out.append((term, " ".join(body)))
            i = j
        else:
            i += 1
    return out


def options_in(text):
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))


def term_words(term):
    """The words of a .TP term line: '.B measure.min_time' -> ['measure.min_time']."""
    term = re.sub(r"^\.[A-Z]+\s*", "", term)
    return [w for w in re.split(r'[\s",]+', term) if w]


# ---- matrix and its commands ------------------------------------------------------

def help_commands():
    out, _ = run([MATRIX, "--help"])
    cmds, opts, where = [], set(), None
    for line in out.splitlines():
        if line.endswith(":") and not line.startswith(" "):
            where = line[:-1]
            continue
        if where == "commands" and line.startswith("  "):
            cmds.append(line.split()[0])
        if where == "options" and line.startswith("  -"):
            opts |= options_in(line.split("  ")[1] if "  " in line.strip() else line)
    return cmds, opts


def help_of(cmd):
    out, _ = run([MATRIX, "help", cmd])
    usage = None
    opts = set()
    for line in out.splitlines():
        if line.startswith("usage: "):
            usage = line[len("usage: "):]
        m = re.match(r"^  ((?:-\w, )?--[\w-]+)", line)
        if m:
            opts |= options_in(m.group(1))
    return usage, opts


def synopsis_lines(secs):
    """The SYNOPSIS as lines: requests dropped, an indented line joined to the
    one before it, spaces squeezed."""
    lines = []
    for line in secs.get("SYNOPSIS", []):
        if line.startswith("."):
            continue
        if line.startswith((" ", "\t")) and lines:
            lines[-1] += " " + line.strip()
        else:
            lines.append(line.strip())
    return [re.sub(r"\s+", " ", l) for l in lines]


def check_matrix_1():
    path = "doc/matrix.1"
    secs = roff_sections(os.path.join(SRC, path))
    cmds, top = help_commands()
    if not cmds:
        problem("'matrix --help' lists no commands")
    syn = synopsis_lines(secs)
    man_top = set()
    for term, _ in roff_entries(secs.get("OPTIONS", [])):
        man_top |= options_in(term)
    for o in sorted(top - man_top):
        problem(f"{path}: option '{o}' of 'matrix --help' is missing from section OPTIONS")
    for o in sorted(man_top - top):
        problem(f"{path}: section OPTIONS documents option '{o}', which 'matrix --help' does not print")
    documented = {t[len("matrix "):] for t in secs if t.startswith("matrix ")}
    for c in cmds:
        usage, opts = help_of(c)
        if usage is None:
            problem(f"'matrix help {c}' prints no usage line")
            continue
        if usage not in syn:
            problem(f"{path}: the usage line of 'matrix help {c}' is missing from SYNOPSIS (write it as printed,"
                    f" an indented line continuing the one before): {usage}")
        if c not in documented:
            problem(f"{path}: command '{c}' of 'matrix --help' has no subsection '.SS matrix {c}' under COMMANDS")
            continue
        man = set()
        for term, _ in roff_entries(secs["matrix " + c]):
            man |= options_in(term)
        for o in sorted(opts - man):
            problem(f"{path}: option '{o}' of 'matrix help {c}' is missing from section 'matrix {c}'"
                    f" (add a .TP entry)")
        for o in sorted(man - opts):
            problem(f"{path}: section 'matrix {c}' documents option '{o}', which 'matrix help {c}' does not print")
    for c in sorted(documented - set(cmds)):
        problem(f"{path}: subsection 'matrix {c}' documents a command that 'matrix --help' does not list")


def check_engine_1():
    path = "doc/matrix-engine.1"
    secs = roff_sections(os.path.join(SRC, path))
    out, _ = run([ENGINE, "--help"])
    flags = set()
    for line in out.splitlines():
        m = re.match(r"^  (--[\w-]+)", line)
        if m:
            flags.add(m.group(1))
    if not flags:
        problem("'matrix-engine --help' lists no flags")
    man = set()
    for term, _ in roff_entries(secs.get("OPTIONS", [])):
        man |= options_in(term)
    for o in sorted(flags - man):
        problem(f"{path}: flag '{o}' of 'matrix-engine --help' is missing from section OPTIONS (add a .TP entry)")
    for o in sorted(man - flags):
        problem(f"{path}: section OPTIONS documents flag '{o}', which 'matrix-engine --help' does not print")


# ---- recipes: what the loader accepts ------------------------------------------------

BASE = {"name": "probe", "engine": "native", "factors": {"batch": [1]}}


def flow(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {flow(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(flow(x) for x in v) + "]"
    return str(v)


def load(doc):
    """The loader's messages for a recipe given as a dict (flow style)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        for k, v in doc.items():
            f.write(f"{k}: {flow(v)}\n")
        name = f.name
    try:
        _, err = run([MATRIX, "expand", name, "--count"])
    finally:
        os.unlink(name)
    return err


def at(path, inner):
    """A recipe with inner at path (a list of keys; 'NAME' a free name)."""
    v = inner
    for seg in reversed(path[1:]):
        v = {("zzname" if seg == "NAME" else seg): v}
    doc = dict(BASE)
    doc[path[0]] = v
    return doc


def loader_path(path):
    return ".".join("zzname" if s == "NAME" else s for s in path)


def unknown_key_list(err, where):
    """The keys the loader lists for an unknown key 'zzprobe' in where ('' top)."""
    inpart = f" in '{where}'" if where else ""
    m = re.search(rf"unknown key '{PROBE}'{re.escape(inpart)} \(expected one of: ([^)]*)\)", err)
    return m.group(1).split(", ") if m else None


def discover(path=(), keys=None):
    """{dotted key: [its fixed values]} for every key the loader accepts, found
    by probing each mapping and each key's value (a mapping of fixed keys, a
    list of such mappings, or a mapping of free names to such mappings)."""
    keys = {} if keys is None else keys
    if not path:
        names = unknown_key_list(load(dict(BASE, **{PROBE: 1})), "")
    else:
        names = None
        for shape in ({PROBE: 1}, [{PROBE: 1}]):
            names = unknown_key_list(load(at(list(path), shape)), loader_path(path))
            if names:
                break
    if not names:
        return keys
    for k in names:
        p = list(path) + [k]
        dotted = ".".join(p)
        keys[dotted] = enum_values(p)
        before = len(keys)
        discover(tuple(p), keys)
        if len(keys) == before:
            named = list(p) + ["NAME"]
            if unknown_key_list(load(at(named, {PROBE: 1})), loader_path(named)):
                discover(tuple(named), keys)
    return keys


def enum_values(path):
    """The values the loader names for a key given 'zzprobe': "'K' must be
    'a', 'b' or 'c', not ..." -> [a, b, c]; [] when it names none."""
    err = load(at(path, PROBE))
    m = re.search(rf"'{re.escape(loader_path(path))}' must be ((?:'[^']*'(?:, | or )?)+), not", err)
    return re.findall(r"'([^']*)'", m.group(1)) if m else []


def factors_and_levels():
    err = load(dict(BASE, factors={PROBE: [1]}))
    m = re.search(rf"unknown factor '{PROBE}' for the native engine \(expected one of: ([^)]*)\)", err)
    if not m:
        problem("the loader does not list the factors for an unknown one: " + err.strip()[:300])
        return {}
    out = {}
    for f in m.group(1).split(", "):
        doc = dict(BASE, factors={f: [PROBE]})
        if f == "engine":
            del doc["engine"]
        err = load(doc)
        lm = re.search(rf"level '{PROBE}' for factor '{re.escape(f)}' \(expected (?:one of: )?([^)]*)\)", err)
        out[f] = lm.group(1).split(", ") if lm and "one of" in lm.group(0) else []
    return out


def accepted(dotted):
    """Whether the loader takes a key that probing did not find (a section
    setting such as containers.runtime): no 'unknown key' for it and no
    complaint about a mapping above it."""
    path = dotted.split(".")
    err = load(at(path, PROBE))
    if re.search(rf"unknown key '{re.escape(path[-1])}'", err):
        return False
    for i in range(1, len(path)):
        if f"'{loader_path(path[:i])}' must be" in err:
            return False
    return True


# ---- recipes: what the documents say ---------------------------------------------------

def md_entries(path, heading):
    """{name: text} of the bullets '- `name` ...' under the '## heading' of a
    Markdown file (its ### subsections included)."""
    out, inside, cur = {}, False, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                inside = line[3:].strip().lower() == heading.lower()
                cur = None
                continue
            if not inside:
                continue
            m = re.match(r"^- `([^`]+)`", line)
            if m:
                cur = m.group(1)
                out[cur] = line
            elif line.startswith(("#", "```")) or not line.strip():
                cur = None
            elif cur and line.startswith("  "):
                out[cur] += " " + line.strip()
    return out


def man_entries(path, section):
    secs = roff_sections(path)
    out = {}
    for term, body in roff_entries(secs.get(section, [])):
        for w in term_words(term):
            out[w] = term + " " + body
    return out


def check_recipe_docs(keys, factors):
    docs = {
        "doc/matrix-recipe.5": (man_entries(os.path.join(SRC, "doc/matrix-recipe.5"), "KEYS"),
                                man_entries(os.path.join(SRC, "doc/matrix-recipe.5"), "FACTORS"),
                                lambda v, text: re.search(rf"(?<![\w.-]){re.escape(v)}(?![\w-])", text)),
        "doc/recipe.md": (md_entries(os.path.join(SRC, "doc/recipe.md"), "Keys"),
                          md_entries(os.path.join(SRC, "doc/recipe.md"), "Factors"),
                          lambda v, text: f"`{v}`" in text),
    }
    for path, (dkeys, dfactors, has) in docs.items():
        where_k = "section KEYS (a .TP entry)" if path.endswith(".5") else "section '## Keys' (a bullet '- `KEY`')"
        where_f = "section FACTORS" if path.endswith(".5") else "section '## Factors'"
        if not dkeys:
            problem(f"{path}: no keys documented in {where_k}")
        for k, values in sorted(keys.items()):
            if k not in dkeys:
                problem(f"{path}: recipe key '{k}' (accepted by the recipe loader) is missing from {where_k}")
                continue
            for v in values:
                if not has(v, dkeys[k]):
                    problem(f"{path}: value '{v}' of recipe key '{k}' (accepted by the recipe loader)"
                            f" is missing from its entry")
        for k in sorted(set(dkeys) - set(keys)):
            if not accepted(k):
                problem(f"{path}: {where_k.split(' (')[0]} documents recipe key '{k}', which the recipe loader rejects")
        for f, levels in sorted(factors.items()):
            if f not in dfactors:
                problem(f"{path}: factor '{f}' (known to the recipe loader) is missing from {where_f}")
                continue
            for lv in levels:
                if not has(lv, dfactors[f]):
                    problem(f"{path}: level '{lv}' of factor '{f}' (known to the recipe loader)"
                            f" is missing from its entry in {where_f}")
        for f in sorted(set(dfactors) - set(factors)):
            problem(f"{path}: {where_f} documents factor '{f}', which the recipe loader does not know")


def main():
    keys = discover()
    factors = factors_and_levels()
    if not keys:
        problem("the recipe loader lists no keys for an unknown one (probe recipes)")
    if "--list" in sys.argv:
        for k, v in sorted(keys.items()):
            print("key", k, " ".join(v))
        for f, lv in factors.items():
            print("factor", f, " ".join(lv))
        return 0
    check_matrix_1()
    check_engine_1()
    check_recipe_docs(keys, factors)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        print(f"{len(problems)} disagreement(s) between the manuals and the programs")
        return 1
    print(f"ok: {len(keys)} recipe keys, {len(factors)} factors, commands and options agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
