#!/usr/bin/env python3
"""make lint-index (part of make lint): the indexes in the tree stay true.
A newcomer finds their way by these indexes, and a stale one sends them to
the wrong file, so this compares each with the code it describes:

  threads   The thread map at the top of bridge/queue.h (thread / file /
            owns / locks, columns set by the dashes under the heading).
            Every pthread_create and MHD_start_daemon in product code
            (libk8s/, common/, bridge/, admission/, epilog/) has its
            creating file or its start routine's file in a row; every file
            a row names exists; every thread row (all but main and "any")
            has a creation site in one of its files.  A count "x NAME"
            names a macro defined in one of the row's files or a header
            beside them; a count "x 14" equals the macro COUNT_OF gives for
            the row (an array's entries, for sizeof(a) / sizeof(a[0])).
            Every lock the locks column names is a pthread_mutex_t of
            libk8s/, common/ or bridge/ and every such mutex is named there
            ("queue.mtx": member mtx of a struct whose name ends in queue;
            "intern_lock": a variable).  Every upper-case name in the map
            is a constant of an enum of queue.h (the queue's kinds) or else
            defined in the code, and every "(thread)" after a kind is a
            row.  The docs' copies of the map (MAP_COPIES) are the header
            line for line.
  sections  Headers that group their prototypes under section comments
            naming the defining file ("/* group.c */", "/* group.c: ...",
            "/* reconcile.c, group.c: ...") have each prototype defined in
            a file the section names, no prototype before the first
            section, and no section naming a file that does not exist.
  order     bridge/bridge.h's sections come in the order in which
            docs/contributors/layout.md's bridge/ entry lists their files
            (the files of one line in any order), and that entry lists
            every C file of bridge/.
  prefixes  Each file's non-static functions start with its name:
            group_* in bridge/group.c, config_* in common/config.c.  main.c
            is exempt and PREFIXES lists the few files with another
            prefix.  In libk8s a function is k8s_* (the public API,
            include/k8s.h), <file>_* (the shared helpers: buf.c buf_*,
            map.c map_*), or declared in libk8s/internal.h.
  reach     Which thread runs which code: from each thread's entry points
            (main's main(), each pthread_create's start routine, the
            callbacks HANDOFFS hands over) along every call and every
            function whose address is taken.  Each file a row of the map
            names runs on that row's thread, and each bridge/ file's
            opening comment says which threads run it ("Threads:
            reconcile, end (end_make, end_make_one)."): all of them but
            main, which may be left out, and a list after a thread is
            exactly the file's functions it runs.
  refs      A file named in a comment (C, shell, Python, Makefile) exists:
            any name ending in .c .h .sh .py .md .mk .yaml .yml or .json.
            A bare name matches any file of that name; a path is taken from
            the repository's top, from the file's directory, or as the tail
            of a path in the tree.  The two design notes the project grew
            from live outside the repository and are never cited (FORBIDDEN
            says which).  Names in <...> (system and library headers), in
            URLs, with a placeholder (NAME, ...) and EXTERNAL's are not
            ours.

C is read with a small tokenizer (comments, strings, preprocessor lines
and bodies set apart), which the house style (return type on its own line,
one declaration a statement) keeps simple.  Prints FILE:LINE: what, one
line per finding, and exits 1 when anything was found.  Python 3, the
standard library only, well under a second.

Usage: scripts/dev/lint-index.py [threads|sections|order|prefixes|reach|refs]...
       (default: all six)
"""
import os
import re
import signal
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# Product code: the daemons, the library and what they share.
PRODUCT = ("libk8s", "common", "bridge", "admission", "epilog")
THREAD_MAP = "bridge/queue.h"

# Docs that carry a copy of the thread map, in a fenced block: it must be
# the header of queue.h, line for line.
MAP_COPIES = ("docs/contributors/internals.md",)

# Rows of the thread map that give their thread count as a number rather
# than as the macro that sizes it: the macro whose value the number must
# equal.  Writing the macro in the map ("informer x NINFORMERS") makes the
# entry unnecessary.
COUNT_OF = {}

# Files whose functions carry a prefix other than the file's name.
PREFIXES = {
    # libslurm owns slurm_*: the bridge's Slurm calls are sctl_*.
    "bridge/slurm.c": ("sctl_",),
    "bridge/slurmsubmit.c": ("sctl_",),
    "bridge/slurmload.c": ("sctl_",),
    "bridge/slurmend.c": ("sctl_",),
    # The HTTP server's files share httpd_, its API's prefix.
    "common/httpdtls.c": ("httpd_",),
    "common/httpdconn.c": ("httpd_",),
    # OpenBSD's names, as every daemon of theirs spells them.
    "libk8s/xmalloc.c": ("x",),
    "libk8s/log.c": ("log_", "fatal"),
    # A file with a data structure of its own beside its module's: the
    # structure's name is the prefix (struct lanes, struct pod_entry).
    "bridge/queue.c": ("queue_", "lanes_", "sreq_", "ereq_", "wreq_",
                       "extcall_"),
    "bridge/podrec.c": ("podrec_", "podentry_"),
    "bridge/worker.c": ("worker_", "fail_"),
}

# File names that comments may cite though they are not in the tree.
EXTERNAL = {
    # Built by make: the compilation database clang-tidy and clangd read.
    "compile_commands.json",
    # libslurm's own header (<slurm/slurm.h>), named bare.
    "slurm.h",
    # Slurm's topology file beside slurm.conf (25.05 on), named bare.
    "topology.yaml",
}
# Placeholders in a cited path: an upper-case word (NAME.yaml, gen/KIND.c)
# that is not one of these real names, or "...".
REAL_CAPS = {"README", "COPYING", "LICENSE", "CHANGELOG"}

# What a cited file name ends with.
REF_EXT = r"(?:c|h|sh|py|md|mk|ya?ml|json)"


def repo_files():
    """Every file of the working tree git knows or would add."""
    try:
        out = subprocess.run(
            ["git", "-C", TOP, "ls-files", "--cached", "--others",
             "--exclude-standard"], capture_output=True, text=True,
            check=True).stdout
        files = [f for f in out.splitlines()
                 if os.path.isfile(os.path.join(TOP, f))]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(TOP):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            for n in names:
                files.append(os.path.relpath(os.path.join(root, n), TOP))
    return sorted(set(files))


def read(path):
    with open(os.path.join(TOP, path), encoding="utf-8",
              errors="replace") as f:
        return f.read()


# ---------------------------------------------------------------------------
# C, tokenized: comments apart, preprocessor lines skipped, strings opaque.

TOKEN = re.compile(r"""
    (?P<comment>/\*.*?\*/) | (?P<cxx>//[^\n]*)
  | (?P<str>"(?:\\.|[^"\\\n])*") | (?P<chr>'(?:\\.|[^'\\\n])*')
  | (?P<id>[A-Za-z_]\w*) | (?P<num>\.?\d(?:[\w.]|[eEpP][+-])*)
  | (?P<nl>\n) | (?P<ws>[ \t\r\f\v]+) | (?P<cont>\\\n) | (?P<punct>.)
""", re.S | re.X)

KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if",
    "inline", "int", "long", "register", "restrict", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "_Bool", "_Noreturn",
    "_Static_assert", "_Alignas", "_Alignof", "_Atomic", "_Thread_local",
    "__attribute__", "__typeof__", "typeof", "__extension__",
}


class CFile:
    """One C file: its tokens, comments, definitions and prototypes."""

    def __init__(self, path):
        self.path = path
        self.text = read(path)
        self.toks = []       # (kind, value, line), no comments
        self.comments = []   # [first line, last line, text, nested]
        self.defs = []       # (name, line, static)
        self.bodies = []     # (name, static, first token, last token)
        self.data = []       # (name, first token, last token): file scope
        self.decls = []      # (name, line, static): prototypes
        self._lex()
        self._parse()

    def _lex(self):
        line, bol, directive = 1, True, False
        for m in TOKEN.finditer(self.text):
            kind, val = m.lastgroup, m.group()
            if kind == "comment" or kind == "cxx":
                self.comments.append([line, line + val.count("\n"), val, 0])
            elif kind == "nl":
                bol, directive = True, False
            elif kind in ("ws", "cont"):
                pass
            elif directive:
                pass
            elif bol and val == "#":
                directive = True
            else:
                bol = False
                self.toks.append((kind, val, line))
            line += val.count("\n")

    def _parse(self):
        """Top-level statements: function definitions and prototypes."""
        toks, n = self.toks, len(self.toks)
        # ci: the next comment, to be told whether it is nested: inside a
        # statement or a body (1), or between top-level statements (0).
        ci = 0
        stmt, i, start = [], 0, 0
        while i < n:
            kind, val, line = toks[i]
            while ci < len(self.comments) and self.comments[ci][0] <= line:
                self.comments[ci][3] = 1 if stmt else 0
                ci += 1
            if val == "{":
                end = self._match(i)
                if self._funcdef(stmt):
                    name, nline = self._name(stmt)
                    static = "static" in [t[1] for t in stmt]
                    self.defs.append((name, nline, static))
                    self.bodies.append((name, static, i, end))
                    stmt = []
                    start = end + 1
                else:
                    # struct, union, enum or initializer body: skip it
                    stmt.append(("body", "{}", line))
                # comments inside the body are below the top level
                while (ci < len(self.comments) and
                       self.comments[ci][0] <= toks[end][2]):
                    self.comments[ci][3] = 1
                    ci += 1
                i = end + 1
                continue
            if val == ";":
                self._decl(stmt)
                self._datum(stmt, start, i)
                stmt = []
                start = i + 1
            else:
                stmt.append(toks[i])
            i += 1
        while ci < len(self.comments):
            self.comments[ci][3] = 0
            ci += 1

    def _datum(self, stmt, first, last):
        """A file-scope variable with an initializer: its name and tokens
        (a table of handlers, say), for the call graph."""
        s = self._strip_attrs(stmt)
        if not s or s[0][1] in ("typedef", "extern") or \
                "=" not in [t[1] for t in s]:
            return
        eq = [t[1] for t in s].index("=")
        ids = [t[1] for t in s[:eq] if t[0] == "id" and
               t[1] not in KEYWORDS]
        if ids:
            self.data.append((ids[-1], first, last))

    def _match(self, i):
        """The index of the token closing the bracket at i."""
        open_, close = self.toks[i][1], {"{": "}", "(": ")", "[": "]"}
        close = close[open_]
        d = 0
        for j in range(i, len(self.toks)):
            v = self.toks[j][1]
            if v == open_:
                d += 1
            elif v == close:
                d -= 1
                if d == 0:
                    return j
        return len(self.toks) - 1

    @staticmethod
    def _strip_attrs(stmt):
        out, i = [], 0
        while i < len(stmt):
            if stmt[i][1] in ("__attribute__", "__extension__"):
                i += 1
                d = 0
                while i < len(stmt):
                    if stmt[i][1] == "(":
                        d += 1
                    elif stmt[i][1] == ")":
                        d -= 1
                        if d == 0:
                            i += 1
                            break
                    i += 1
                continue
            out.append(stmt[i])
            i += 1
        return out

    def _name(self, stmt):
        """The declarator's name: the identifier before the first '('."""
        stmt = self._strip_attrs(stmt)
        for j, t in enumerate(stmt):
            if t[1] == "(":
                if j > 0 and stmt[j - 1][0] == "id" and \
                        stmt[j - 1][1] not in KEYWORDS:
                    return stmt[j - 1][1], stmt[j - 1][2]
                return None, None
            if t[1] in ("=", "body"):
                return None, None
        return None, None

    def _funcdef(self, stmt):
        s = self._strip_attrs(stmt)
        if not s or s[-1][1] != ")" or s[0][1] == "typedef":
            return False
        if any(t[1] in ("=", "{}") for t in s):
            return False
        name, _ = self._name(stmt)
        return name is not None

    def _decl(self, stmt):
        if not stmt or stmt[0][1] == "typedef":
            return
        name, line = self._name(stmt)
        # All-capitals names are macros (TAILQ_HEAD(...) x;), not functions.
        if name is None or name.isupper():
            return
        self.decls.append((name, line, "static" in [t[1] for t in stmt]))

    def args(self, i):
        """The argument token lists of the call whose '(' is at i."""
        end = self._match(i)
        args, cur, d = [], [], 0
        for t in self.toks[i + 1:end]:
            if t[1] in ("(", "[", "{"):
                d += 1
            elif t[1] in (")", "]", "}"):
                d -= 1
            if t[1] == "," and d == 0:
                args.append(cur)
                cur = []
            else:
                cur.append(t)
        args.append(cur)
        return args

    def calls(self, fn):
        """(line, [argument token lists]) of every call of fn."""
        out = []
        for i, (kind, val, line) in enumerate(self.toks):
            if kind != "id" or val != fn or i + 1 >= len(self.toks) or \
                    self.toks[i + 1][1] != "(":
                continue
            out.append((line, self.args(i + 1)))
        return out

    def array_entries(self, name):
        """Entries of the initializer of array name (name[] = { ... })."""
        t = self.toks
        for i in range(len(t) - 4):
            if t[i][1] == name and t[i + 1][1] == "[":
                j = self._match(i + 1) + 1
                if j + 1 < len(t) and t[j][1] == "=" and t[j + 1][1] == "{":
                    end = self._match(j + 1)
                    count, d, last = 0, 0, None
                    for k in range(j + 2, end):
                        v = t[k][1]
                        if v in ("(", "[", "{"):
                            d += 1
                        elif v in (")", "]", "}"):
                            d -= 1
                        if d == 0 and v == ",":
                            count += 1
                        last = v
                    if last is not None and last != ",":
                        count += 1
                    return count, t[i][2]
        return None, None


class Tree:
    """The repository's files, and its C files parsed on demand."""

    def __init__(self):
        self.files = repo_files()
        self.fileset = set(self.files)
        self.by_base = {}
        for f in self.files:
            self.by_base.setdefault(os.path.basename(f), []).append(f)
        self._c = {}
        self._defs = None

    def c(self, path):
        if path not in self._c:
            self._c[path] = CFile(path)
        return self._c[path]

    def cfiles(self, dirs=None, ext=(".c", ".h")):
        for f in self.files:
            if f.endswith(ext) and (dirs is None or f.split("/")[0] in dirs):
                yield f

    def defs(self):
        """name -> [(file, line, static)] over every C file we write."""
        if self._defs is None:
            self._defs = {}
            for f in self.cfiles(ext=(".c", ".h")):
                if f.startswith("scripts/"):
                    continue
                for name, line, static in self.c(f).defs:
                    self._defs.setdefault(name, []).append(
                        (f, line, static))
        return self._defs

    def identifiers(self, dirs):
        """Every identifier and macro name of the C files under dirs."""
        ids = set()
        for f in self.cfiles(dirs):
            cf = self.c(f)
            ids |= {t[1] for t in cf.toks if t[0] == "id"}
            ids |= set(re.findall(r"^[ \t]*#[ \t]*define[ \t]+(\w+)",
                                  cf.text, re.M))
        return ids

    def macros(self, paths):
        """name -> (file, line, value text) of the #defines in paths."""
        out = {}
        rx = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)(?![\w(])"
                        r"[ \t]*((?:[^\n\\]|\\\n)*)", re.M)
        for p in paths:
            if p not in self.fileset:
                continue
            text = read(p)
            for m in rx.finditer(text):
                val = re.sub(r"/\*.*?\*/|//.*", "", m.group(2), flags=re.S)
                out.setdefault(m.group(1), (p, text.count(
                    "\n", 0, m.start()) + 1, val.strip()))
        return out

    def macro_value(self, name, macros, seen=()):
        """The integer a macro stands for, or None when it is not plain."""
        if name not in macros or name in seen:
            return None
        path, _, val = macros[name]
        m = re.search(r"sizeof\s*\(\s*(\w+)\s*\)\s*/\s*sizeof\s*\(\s*\1\s*"
                      r"\[\s*0\s*\]\s*\)", val)
        if m:
            return self.c(path).array_entries(m.group(1))[0]
        expr = re.sub(r"\((?:int|long|unsigned|size_t|unsigned int)\)", "",
                      val)
        expr = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", expr)

        def sub(m):
            v = self.macro_value(m.group(), macros, seen + (name,))
            return str(v) if v is not None else "x"
        expr = re.sub(r"[A-Za-z_]\w*", sub, expr)
        if not re.fullmatch(r"[\d\s()+*/-]+", expr):
            return None
        try:
            return int(eval(expr, {"__builtins__": {}}))  # digits only
        except (SyntaxError, ZeroDivisionError, TypeError):
            return None

    def resolve(self, name, here):
        """The repository file a cited name means, or None."""
        name = name.lstrip("./") if name.startswith("./") else name
        if "/" not in name:
            return (self.by_base.get(name) or [None])[0]
        for cand in (os.path.normpath(os.path.join(here, name)),
                     os.path.normpath(name)):
            if cand in self.fileset:
                return cand
            # a directory named as a path is cited too (libk8s/, test/e2e)
            if any(f.startswith(cand + "/") for f in self.files):
                return cand
        tail = "/" + name.strip("/")
        for f in self.files:
            if f.endswith(tail) or ("/" + f + "/").find(tail + "/") >= 0:
                return f
        return None


# ---------------------------------------------------------------------------
# threads: the thread map of bridge/queue.h

def joined(words):
    """Words of one cell over several lines as one text, and the line each
    character came from.  A word cut at a '.', '/' or '_' ("libk8s/" then
    "informer.c", "submitter." then "lock") is put back together."""
    text, lines = "", []
    for w, ln in words:
        sep = "" if not text or text[-1] in "./_" else " "
        text += sep + w
        lines += [ln] * (len(sep) + len(w))
    return text, lines


def thread_map(tree):
    """The thread map: its rows [{name, count, line, files: [(name, line)],
    locks: [(line, struct or None, name)]}], the prose under the table as
    (text, line of each character), and the whole comment's upper-case
    names (MSG_WRITE, EVENTER_LANES) as (line, name).

    The columns are where the dashes under the heading put them, and a
    word belongs to the column it starts in, so a word may run past its
    column's end.  A row starts with a word at the left edge; the lines
    below it, up to the next such word, are its continuation (a thread
    cell may go on too: "informer" then " x NINFORMERS")."""
    text = read(THREAD_MAP)
    m = re.match(r"\s*/\*.*?\*/", text, re.S)
    if not m:
        return None, None, None
    rows, prose, caps = [], [], []
    cols, ended = None, False
    for ln, raw in enumerate(m.group(0).split("\n"), 1):
        body = re.sub(r"^ ?\* ?|^\s*/\*+|\*/\s*$", "", raw, count=1)
        caps += [(ln, c) for c in re.findall(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]*"
                                             r"[A-Z0-9]\b", body)]
        if cols is None:
            if re.fullmatch(r"-+( +-+)+\s*", body):
                cols = [mm.start() for mm in re.finditer(r"-+", body)]
            continue
        if ended:
            prose.append((body, ln))
            continue
        if not body.strip():
            ended = True
            continue
        words = [(mm.start(), mm.group()) for mm in re.finditer(r"\S+", body)]
        if words[0][0] == 0:
            rows.append({"line": ln, "cells": [[] for _ in cols]})
        elif not rows:
            continue
        for start, w in words:
            col = max(i for i, c in enumerate(cols) if c <= start) \
                if start >= cols[0] else 0
            rows[-1]["cells"][col].append((w, ln))
    for r in rows:
        cells = r.pop("cells")
        first = " ".join(w for w, ln in cells[0] if ln == r["line"])
        thread, _ = joined(cells[0])
        mm = re.search(r"\bx\s+(\S+)", thread)
        r["count"] = mm.group(1) if mm else None
        r["name"] = re.sub(r"\s+x\s+\S+.*", "", first).strip()
        r["thread"] = thread
        files, flines = joined(cells[1]) if len(cells) > 1 else ("", [])
        r["files"] = []
        for mm in re.finditer(r"\S+", files):
            r["files"].append((mm.group(), flines[mm.start()]))
        r["locks"] = []
        if len(cells) > 3:
            locks, llines = joined(cells[3])
            for mm in re.finditer(r"(?:\b(\w+)\.)?\b(\w*(?:lock|mtx|"
                                  r"mutex))\b", locks):
                r["locks"].append((llines[mm.start()], mm.group(1),
                                   mm.group(2)))
    text, lines = "", []
    for body, ln in prose:
        for w in body.split():
            text += w + " "
            lines += [ln] * (len(w) + 1)
    return rows, (text, lines), caps


def map_file(tree, name):
    """A file of the map: beside queue.h, or from the top."""
    for cand in (os.path.join(os.path.dirname(THREAD_MAP), name), name):
        if cand in tree.fileset:
            return cand
    return None


def check_threads(tree, out):
    rows, prose, caps = thread_map(tree)
    where = THREAD_MAP
    if not rows:
        out.append(f"{where}:1: no thread map (thread / file / owns / locks "
                   "table) in the opening comment")
        return
    # Creation sites in product code: (file, line, start routine's file).
    sites = []
    for f in tree.cfiles(PRODUCT, ext=(".c",)):
        cf = tree.c(f)
        for line, args in cf.calls("pthread_create"):
            ids = [t[1] for t in args[2] if t[0] == "id"] if \
                len(args) > 2 else []
            routine = ids[-1] if ids else None
            home = [d[0] for d in tree.defs().get(routine, [])
                    if d[0] == f or not d[2]]
            sites.append((f, line, "pthread_create", routine,
                          home[0] if home else None))
        for line, _ in cf.calls("MHD_start_daemon"):
            sites.append((f, line, "MHD_start_daemon", None, None))
        for call in SKELETONS:
            for line, _ in cf.calls(call):
                sites.append((f, line, call, None, None))
    # The rows' files, resolved.
    rowfiles = []
    for r in rows:
        rf = set()
        for name, ln in r["files"]:
            p = map_file(tree, name)
            if p is None:
                out.append(f"{where}:{ln}: thread map row '{r['name']}' "
                           f"names {name}, which does not exist")
            else:
                rf.add(p)
        rowfiles.append(rf)
    mapped = set().union(*rowfiles)
    for f, line, call, routine, home in sites:
        if f in mapped or (home and home in mapped):
            continue
        what = f"{call}({routine})" if routine else call
        # The map names bridge/ files bare, the others from the top.
        name = home or f
        if name.startswith(os.path.dirname(THREAD_MAP) + "/"):
            name = os.path.basename(name)
        out.append(f"{f}:{line}: {what} starts a thread the thread map "
                   f"({where}) does not list: add a row naming {name}")
    site_files = {s[0] for s in sites} | {s[4] for s in sites if s[4]}
    for r, rf in zip(rows, rowfiles):
        if r["name"] in ("main", "any"):
            continue
        if not rf & site_files:
            out.append(f"{where}:{r['line']}: thread map row '{r['name']}' "
                       "is a thread, but none of its files "
                       f"({', '.join(sorted(rf)) or 'none'}) starts one")
    # Counts.  COUNT_OF stays true too: an entry no numeric count uses goes.
    numeric = {r["name"] for r in rows
               if r["count"] and r["count"].isdigit()}
    me = os.path.relpath(os.path.abspath(__file__), TOP)
    with open(os.path.abspath(__file__), encoding="utf-8") as f:
        mine = f.read()
    for name in sorted(set(COUNT_OF) - numeric):
        ln = mine.split(f'    "{name}":')[0].count("\n") + 1
        out.append(f"{me}:{ln}: COUNT_OF has '{name}', which no row of the "
                   f"thread map gives a number for: remove it")
    for r, rf in zip(rows, rowfiles):
        if r["count"] is None or not rf:
            continue
        dirs = {os.path.dirname(p) for p in rf} | {"include"}
        heads = [f for f in tree.files if f.endswith(".h") and
                 os.path.dirname(f) in dirs]
        macros = tree.macros(sorted(rf) + heads)
        count, ln = r["count"], r["line"]
        if re.fullmatch(r"\d+", count):
            name = COUNT_OF.get(r["name"])
            if name is None:
                out.append(f"{where}:{ln}: thread map row '{r['thread']}': "
                           "write the macro that sizes the count instead "
                           "of a number")
                continue
            if name not in macros:
                out.append(f"{where}:{ln}: thread map row '{r['thread']}': "
                           f"{name} (lint-index.py's COUNT_OF) is not "
                           "defined in the row's files or a header beside "
                           "them")
                continue
            val = tree.macro_value(name, macros)
            mpath, mline, mval = macros[name]
            if val is None:
                out.append(f"{where}:{ln}: thread map row '{r['thread']}': "
                           f"cannot compute {name} ({mpath}:{mline}: "
                           f"{mval}); write 'x {name}'")
            elif val != int(count):
                out.append(f"{where}:{ln}: thread map row '{r['thread']}' "
                           f"says {count}, but {name} is {val} "
                           f"({mpath}:{mline})")
        elif re.fullmatch(r"[A-Z_][A-Z0-9_]*", count):
            if count not in macros:
                out.append(f"{where}:{ln}: thread map row '{r['thread']}': "
                           f"{count} is not defined in the row's files or "
                           "a header beside them")
        else:
            out.append(f"{where}:{ln}: thread map row '{r['thread']}': the "
                       "count is neither a number nor a macro")
    # The upper-case names the map uses: the queue's kinds (MSG_WRITE) are
    # constants of an enum of queue.h, anything else is in the code.
    qf = tree.c(THREAD_MAP)
    kinds, t = set(), qf.toks
    for i in range(len(t) - 2):
        if t[i][1] == "enum" and "{" in (t[i + 1][1], t[i + 2][1]):
            j = i + 1 if t[i + 1][1] == "{" else i + 2
            kinds |= {x[1] for x in t[j + 1:qf._match(j)]
                      if x[0] == "id" and x[1].isupper()}
    prefixes = {k.split("_")[0] + "_" for k in kinds}
    known = tree.identifiers(PRODUCT + ("include",))
    for ln, name in caps:
        if name.split("_")[0] + "_" in prefixes:
            if name not in kinds:
                out.append(f"{where}:{ln}: the thread map names {name}, "
                           "which no enum of queue.h has")
        elif name not in known:
            out.append(f"{where}:{ln}: the thread map names {name}, which "
                       "the code does not define")
    # "MSG_WRITE (writepool)": the thread it comes from is a row.
    names = {r["name"] for r in rows}
    text, lines = prose
    for mm in re.finditer(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\s*\(([^)]*)\)",
                          text):
        th = mm.group(2)
        if th not in names and th.rstrip("s") not in names:
            out.append(f"{where}:{lines[mm.start()]}: the thread map says "
                       f"{mm.group(1)} comes from '{th}', which is not a "
                       "row")
    check_locks(tree, [lk for r in rows for lk in r["locks"]], out)
    check_map_copies(tree, out)


# ---------------------------------------------------------------------------
# reach: which thread runs which code, from the thread map's entry points

# The code of the bridge daemon, which the thread map describes.
BRIDGE = ("libk8s", "common", "bridge")

# Calls that hand the functions named in their arguments to another thread
# rather than calling them: pthread_create's start routine runs on the
# thread the map's row for the creating file names; the others' callbacks
# run on the thread given here.  A function that makes such a call hands
# over every function whose address it takes (the callbacks it fills in
# before the call, too), so it never reaches them itself.
HANDOFFS = {
    "pthread_create": None,
    "worker_new": None,
    "k8s_informer_new": "informer",
    "httpd_start": "HTTP",
    "MHD_start_daemon": "HTTP",
    "ender_new": "end",
}

# Calls that start threads running a skeleton of ours: the skeleton's
# loop runs on them too (worker_new's threads run worker.c's worker_main,
# which takes and runs by the policy handed over).  Such a call is a
# thread's creation site, for the map, as a pthread_create is.
SKELETONS = {"worker_new": "worker_main"}


class CallGraph:
    """Functions of the bridge's code and what each may call: each call
    and each function whose address it takes (a callback it passes on or
    stores), including through a file-scope table it reads.  Functions
    handed to another thread (HANDOFFS) are that thread's entry points
    instead."""

    def __init__(self, tree):
        self.tree = tree
        self.body = {}      # (file, name) -> (CFile, first, last)
        self.public = {}    # name -> (file, name), non-static
        self.statics = {}   # file -> {name}
        self.data = {}      # file -> {variable: [token ranges]}
        for f in tree.cfiles(BRIDGE, ext=(".c",)):
            cf = tree.c(f)
            for name, static, a, b in cf.bodies:
                self.body[(f, name)] = (cf, a, b)
                if static:
                    self.statics.setdefault(f, set()).add(name)
                else:
                    self.public.setdefault(name, (f, name))
            for name, a, b in cf.data:
                self.data.setdefault(f, {}).setdefault(name, []).append(
                    (a, b))
        self.edges = {}
        # (thread or None, file, line, (file, name), the handing call)
        self.entries = []
        for fn in self.body:
            self.edges[fn] = self._edges(fn)

    def resolve(self, f, name):
        if name in self.statics.get(f, ()):
            return (f, name)
        return self.public.get(name)

    def _refs(self, f, cf, a, b, seen):
        """(function, taken, line) of each function the tokens a..b name:
        taken when not called (a callback); through file-scope tables."""
        t = cf.toks
        for i in range(a, b + 1):
            if t[i][0] != "id":
                continue
            name = t[i][1]
            fn = self.resolve(f, name)
            if fn is not None:
                called = i + 1 < len(t) and t[i + 1][1] == "("
                yield fn, not called, t[i][2]
            elif name in self.data.get(f, {}) and name not in seen:
                seen.add(name)
                for da, db in self.data[f][name]:
                    for r in self._refs(f, cf, da, db, seen):
                        yield r[0], True, r[2]

    def _handed(self, f, cf, a, b):
        """(thread or None, line, function) of each function a..b hands to
        another thread: named in a HANDOFFS call's arguments (the start
        routine alone for pthread_create), or stored in a variable the call
        is given ("o.handler = endpoints_handle; httpd_start(&o, ...)")."""
        t = cf.toks
        for i in range(a, b + 1):
            if t[i][1] not in HANDOFFS or i + 1 > b or t[i + 1][1] != "(":
                continue
            args = cf.args(i + 1)
            if t[i][1] == "pthread_create":
                args = args[2:3]
            # a function called in the arguments runs here, before the call
            names = {x[1] for arg in args for k, x in enumerate(arg)
                     if x[0] == "id" and (k + 1 == len(arg) or
                                          arg[k + 1][1] != "(")}
            # a file-scope table handed over (a worker's policy): its
            # functions
            for name in sorted(names & set(self.data.get(f, {}))):
                for da, db in self.data[f][name]:
                    names |= {x[1] for x in cf.toks[da:db + 1]
                              if x[0] == "id"}
            if t[i][1] in SKELETONS:
                for key in self.body:
                    if key[1] == SKELETONS[t[i][1]]:
                        yield HANDOFFS[t[i][1]], t[i][2], key, t[i][1]
            for j in range(a, b - 3):
                if t[j][1] in names and t[j + 1][1] in (".", "->") and \
                        t[j + 3][1] == "=" and t[j + 4][0] == "id":
                    names.add(t[j + 4][1])
            for name in sorted(names):
                fn = self.resolve(f, name)
                if fn is not None:
                    yield HANDOFFS[t[i][1]], t[i][2], fn, t[i][1]

    def _edges(self, fn):
        f, _ = fn
        cf, a, b = self.body[fn]
        handed = set()
        for thread, line, callee, call in self._handed(f, cf, a, b):
            self.entries.append((thread, f, line, callee, call))
            handed.add(callee)
        return {callee for callee, _, _ in self._refs(f, cf, a, b, set())
                if callee != fn and callee not in handed}

    def reach(self, roots):
        """Every function reached from roots."""
        seen, todo = set(roots), list(roots)
        while todo:
            for g in self.edges.get(todo.pop(), ()):
                if g not in seen:
                    seen.add(g)
                    todo.append(g)
        return seen


def thread_reach(tree, rows):
    """row name -> the functions its thread runs: from main's main() for
    the main row, from the entry points HANDOFFS finds for the others (a
    pthread_create's start routine goes to the row that names the
    routine's file, else the creating file's; a worker_new's policy to the
    row naming the calling file).  Rows "any" are not computed."""
    g = CallGraph(tree)
    rowfiles = {}
    for r in rows:
        rowfiles.setdefault(r["name"], set()).update(
            p for p in (map_file(tree, n) for n, _ in r["files"]) if p)
    roots = {r["name"]: set() for r in rows if r["name"] != "any"}
    if ("bridge/main.c", "main") in g.body:
        roots.setdefault("main", set()).add(("bridge/main.c", "main"))
    for thread, f, _, fn, call in g.entries:
        if thread is None:
            # the row naming the start routine's file (a worker's policy:
            # the calling file) else the other; of several, the one whose
            # words the routine's name has most of (HTTP reaper:
            # httpd_reaper_main)
            first, second = (fn[0], f) if call == "pthread_create" else \
                (f, fn[0])
            cands = [n for n, fs in rowfiles.items()
                     if n != "any" and first in fs] or \
                [n for n, fs in rowfiles.items()
                 if n != "any" and second in fs]
            cands.sort(key=lambda n: -sum(w.lower() in fn[1]
                                          for w in n.split()))
            thread = cands[0] if cands else None
        if thread in roots:
            roots[thread].add(fn)
    return g, {n: g.reach(rs) for n, rs in roots.items()}


def check_reach(tree, out):
    rows, _, _ = thread_map(tree)
    if not rows:
        return
    g, runs = thread_reach(tree, rows)
    where = THREAD_MAP
    files_of = {n: {f for f, _ in fns} for n, fns in runs.items()}
    names = sorted(files_of, key=len, reverse=True)
    # The map: each file a thread's row names runs on that thread.
    for r in rows:
        if r["name"] not in runs:
            continue
        if not runs[r["name"]]:
            out.append(f"{where}:{r['line']}: thread map row '{r['name']}' "
                       "has no entry point: no pthread_create of its files, "
                       "and no HANDOFFS call hands it a function")
            continue
        for name, ln in r["files"]:
            p = map_file(tree, name)
            if p and p.startswith(BRIDGE) and p not in files_of[r["name"]]:
                out.append(f"{where}:{ln}: thread map row '{r['name']}' "
                           f"names {name}, but the {r['name']} thread "
                           "never runs its code")
    # The files: each bridge/ file's opening comment says which threads
    # run its code ("Threads: reconcile, end (end_make, end_make_one)."):
    # every thread but main (which starts, stops and frees everything)
    # that reaches one of its functions, and no other; a thread with a list
    # runs those of the file's functions and no others.
    ran = {}
    for n, fns in runs.items():
        for f, fn in fns:
            ran.setdefault(f, {}).setdefault(n, set()).add(fn)
    for f in tree.cfiles(("bridge",), ext=(".c",)):
        cf = tree.c(f)
        head = next((c for c in cf.comments if c[3] == 0), None)
        claim = threads_claim(head[2]) if head else None
        mine = {n: fns for n, fns in ran.get(f, {}).items() if n != "main"}
        if not mine and "main" in ran.get(f, {}):
            mine_main = "main"
        else:
            mine_main = "none"
        want = ", ".join(
            f"{n} ({', '.join(sorted(fns))})" if len(fns) <= 3 and
            len(fns) < len([1 for k in g.body if k[0] == f]) else n
            for n, fns in sorted(mine.items(), key=lambda kv: (
                -len(kv[1]), kv[0]))) or mine_main
        if claim is None:
            out.append(f"{f}:1: the opening comment says no "
                       f"'Threads: {want}.' line")
            continue
        ln, said = claim
        ln += head[0] - 1
        for n, fns in said.items():
            if n == "main" and fns is None and "main" in ran.get(f, {}):
                continue
            if n not in mine:
                out.append(f"{f}:{ln}: says the {n} thread runs its code, "
                           f"but it never does (Threads: {want})")
            elif fns is not None and fns != mine[n]:
                out.append(f"{f}:{ln}: says the {n} thread runs "
                           f"{', '.join(sorted(fns))}, but it runs "
                           f"{', '.join(sorted(mine[n]))}")
        for n in sorted(set(mine) - set(said)):
            out.append(f"{f}:{ln}: the {n} thread runs its code too "
                       f"({', '.join(sorted(mine[n])[:3])}): say so "
                       f"(Threads: {want})")


def threads_claim(text):
    """(line within the comment, {thread: set of functions or None}) of a
    comment's 'Threads: a, b (f, g).' line (which may wrap), or None."""
    m = re.search(r"Threads:((?:[^.]|\.(?!\s))*)\.?", text)
    if not m:
        return None
    body = re.sub(r"\s*\n\s*\*\s*", " ", m.group(1)).strip()
    said = {}
    if body != "none":
        for mm in re.finditer(r"([\w ]+?)\s*(?:\(([^)]*)\))?\s*(?:,|$)",
                              body):
            if not mm.group(1).strip():
                continue
            fns = None if mm.group(2) is None else {
                x.strip() for x in mm.group(2).split(",")}
            said[mm.group(1).strip()] = fns
    return text.count("\n", 0, m.start()) + 1, said


def check_map_copies(tree, out):
    """Each copy of the map in the docs is the header, line for line."""
    text = read(THREAD_MAP)
    m = re.match(r"\s*/\*.*?\*/", text, re.S)
    head = [(i, re.sub(r"^ \*( |$)", "", l).rstrip())
            for i, l in enumerate(m.group(0).split("\n")[1:-1], 2)]
    for doc in MAP_COPIES:
        if doc not in tree.fileset:
            out.append(f"{doc}:1: MAP_COPIES names it, but it does not exist")
            continue
        lines = read(doc).split("\n")
        fences = [i for i, l in enumerate(lines) if l.startswith("```")]
        block = None
        for a, b in zip(fences[::2], fences[1::2]):
            if any(re.match(r"\s*thread\s+file\s+owns\s+locks", l)
                   for l in lines[a + 1:b]):
                block = (a + 1, lines[a + 1:b])
                break
        if block is None:
            out.append(f"{doc}:1: no fenced copy of the thread map (its "
                       "table's heading: thread file owns locks); copy the "
                       f"header of {THREAD_MAP} there, or drop the doc "
                       "from lint-index.py's MAP_COPIES")
            continue
        first, copy = block
        copy = [l.rstrip() for l in copy]
        for k in range(max(len(copy), len(head))):
            mine = copy[k] if k < len(copy) else None
            theirs = head[k][1] if k < len(head) else None
            if mine != theirs:
                where = f"{THREAD_MAP}:{head[k][0]}" if k < len(head) else \
                    f"the end of {THREAD_MAP}'s header"
                out.append(f"{doc}:{first + k + 1}: the copy of the thread "
                           f"map differs from {where}; copy the header "
                           "again")
                break


def mutexes(tree):
    """(file, line, struct or None, name) of every pthread_mutex_t of the
    bridge's code: libk8s/, common/, bridge/ (admission.h keeps its own)."""
    out = []
    for f in tree.cfiles(("libk8s", "common", "bridge", "include")):
        t = tree.c(f).toks
        for i in range(len(t) - 1):
            if t[i][1] != "pthread_mutex_t" or t[i + 1][0] != "id":
                continue
            # The struct around it: back to the '{' left open.
            d, struct = 0, None
            for j in range(i - 1, -1, -1):
                if t[j][1] == "}":
                    d += 1
                elif t[j][1] == "{":
                    if d == 0:
                        if j >= 2 and t[j - 2][1] in ("struct", "union"):
                            struct = t[j - 1][1]
                        break
                    d -= 1
            out.append((f, t[i + 1][2], struct, t[i + 1][1]))
    return out


def check_locks(tree, locks, out):
    have = mutexes(tree)

    def named(lk, m):
        return lk[2] == m[3] and (lk[1] is None or (
            m[2] is not None and m[2].endswith(lk[1])))
    for lk in locks:
        if not any(named(lk, m) for m in have):
            what = f"{lk[1]}.{lk[2]}" if lk[1] else lk[2]
            out.append(f"{THREAD_MAP}:{lk[0]}: the thread map's locks name "
                       f"{what}, which no pthread_mutex_t of libk8s/, "
                       "common/ or bridge/ is")
    for m in have:
        if not any(named(lk, m) for lk in locks):
            what = f"struct {m[2]}'s {m[3]}" if m[2] else m[3]
            out.append(f"{m[0]}:{m[1]}: {what} is a lock the thread map "
                       f"({THREAD_MAP}) does not name in its locks column")


# ---------------------------------------------------------------------------
# sections: the defining file's name as a comment over prototypes

SECTION = re.compile(r"^\s*((?:[\w./-]+\.c)(?:\s*(?:,|and)\s*[\w./-]+\.c)*)"
                     r"\s*(?::|$)")


def section_files(comment):
    """The files a section comment names, or None if it is not one."""
    body = re.sub(r"^/\*+|\*+/$", "", comment.strip())
    body = " ".join(re.sub(r"^\s*\*", "", l) for l in body.split("\n"))
    m = SECTION.match(body)
    if not m:
        return None
    return re.findall(r"[\w./-]+\.c", m.group(1))


def section_home(tree, header, name):
    """The file a header's section name means: beside the header, in
    libk8s/ for include/, or from the top."""
    here = os.path.dirname(header)
    cands = [os.path.join(here, name), name]
    if here == "include":
        cands.insert(1, os.path.join("libk8s", name))
    for c in cands:
        if c in tree.fileset:
            return c
    return None


def check_sections(tree, out):
    defs = tree.defs()
    for h in tree.cfiles(ext=(".h",)):
        if h.startswith("scripts/"):
            continue
        cf = tree.c(h)
        sections = []  # (line, [files], [resolved])
        for first, last, text, nested in cf.comments:
            if nested:
                continue
            names = section_files(text)
            if names is None:
                continue
            res = []
            for n in names:
                p = section_home(tree, h, n)
                if p is None:
                    out.append(f"{h}:{first}: section /* {n} */ names a file "
                               "that does not exist")
                else:
                    res.append(p)
            sections.append((first, names, res))
        if not sections:
            continue
        defined_here = {d[0] for d in cf.defs}
        for name, line, static in cf.decls:
            if static or name in defined_here:
                continue
            sec = None
            for s in sections:
                if s[0] < line:
                    sec = s
            homes = [d[0] for d in defs.get(name, [])]
            found = ", ".join(f"{d[0]}:{d[1]}" for d in defs.get(name, [])
                              if not d[2])
            found = f"is defined in {found}" if found else "is defined " \
                "nowhere"
            if sec is None:
                out.append(f"{h}:{line}: {name} comes before the first "
                           f"section comment; it {found}")
                continue
            if not sec[2]:
                continue  # the missing file was reported above
            if not set(sec[2]) & set(homes):
                label = ", ".join(sec[1])
                out.append(f"{h}:{line}: {name} is under /* {label} */ "
                           f"(line {sec[0]}) but {found}")


# The header whose sections follow the layout's order, and the layout.
ORDERED_HEADER = "bridge/bridge.h"
LAYOUT = "docs/contributors/layout.md"


def layout_order(tree, directory):
    """{file: (position, line)} of the files the layout's entry for
    directory ("bridge/     ...") lists at the start of a line ("  a.c,
    b.c: what they are"); the files of one line share a position."""
    if LAYOUT not in tree.fileset:
        return {}
    order, inside, pos = {}, False, 0
    for ln, line in enumerate(read(LAYOUT).split("\n"), 1):
        if re.match(r"\S", line):
            inside = line.startswith(directory + "/ ")
            if not inside:
                continue
        if not inside:
            continue
        m = re.match(r"^\s+((?:[\w-]+\.[ch](?:,\s*)?)+):", line)
        if m:
            pos += 1
            for f in re.findall(r"[\w-]+\.[ch]", m.group(1)):
                order.setdefault(f"{directory}/{f}", (pos, ln))
    return order


def check_order(tree, out):
    """The ordered header's sections come in the layout's order, and the
    layout lists every file of the header's directory."""
    h = ORDERED_HEADER
    if h not in tree.fileset:
        return
    d = os.path.dirname(h)
    order = layout_order(tree, d)
    for f in tree.files:
        if os.path.dirname(f) == d and f.endswith(".c") and \
                f not in order:
            out.append(f"{LAYOUT}:1: the {d}/ entry does not list "
                       f"{os.path.basename(f)}")
    last, last_name = (0, 0), None
    for first, _, text, nested in tree.c(h).comments:
        names = section_files(text) if not nested else None
        for n in names or ():
            p = section_home(tree, h, n)
            if p not in order:
                continue
            if order[p][0] < last[0]:
                out.append(f"{h}:{first}: section {n} comes after "
                           f"{last_name}, but {LAYOUT}:{order[p][1]} lists "
                           f"it before ({LAYOUT}:{last[1]}): one order for "
                           "both")
            last, last_name = order[p], n


# ---------------------------------------------------------------------------
# prefixes: each file's functions start with its name

def check_prefixes(tree, out):
    internal = {d[0] for d in tree.c("libk8s/internal.h").decls} \
        if "libk8s/internal.h" in tree.fileset else set()
    for f in tree.cfiles(("libk8s", "common", "bridge", "admission"),
                         ext=(".c",)):
        base = os.path.basename(f)[:-2]
        if base == "main":
            continue
        ok = PREFIXES.get(f, (base + "_",))
        for name, line, static in tree.c(f).defs:
            if static or name.isupper() or name.startswith(ok):
                continue
            if f.startswith("libk8s/"):
                if name.startswith("k8s_") or name in internal:
                    continue
                want = f"k8s_, {' or '.join(ok)}, or a declaration in " \
                    "libk8s/internal.h"
            else:
                want = " or ".join(ok)
            out.append(f"{f}:{line}: {name} is not static and does not "
                       f"start with {want}")


# ---------------------------------------------------------------------------
# refs: files named in comments exist

REF = re.compile(r"(?<![\w./*$<>{}-])((?:[\w.-]+/)*[\w-][\w.-]*\." + REF_EXT +
                 r")(?![\w/*>-])")
URLISH = re.compile(r"\w+://\S+|<[^<>\s]+\.[a-z]+>|\b[\w.-]+\.(?:io|com|org|"
                    r"net|dev|sh)/\S*")
FORBIDDEN = re.compile(r"\b(SPEC\.md|DESIGN\.md)\b")
# The lint scripts that name them to forbid them (whatever their suffix).
FORBIDDEN_OK = {"lint-docs", "lint-index"}


def script_kind(path):
    base = os.path.basename(path)
    if base == "Makefile" or path.endswith(".mk"):
        return "#"
    if path.endswith((".sh", ".py", ".bash")):
        return "#"
    if "." not in base:
        try:
            with open(os.path.join(TOP, path), encoding="utf-8",
                      errors="replace") as f:
                first = f.readline()
        except OSError:
            return None
        if first.startswith("#!") and re.search(r"sh|python", first):
            return "#"
    return None


def script_comments(path):
    """(line, text) of a script's comments: whole-line ones, trailing ones
    after a blank outside quotes, and a Python file's opening docstring."""
    text = read(path)
    out = []
    if path.endswith(".py"):
        m = re.match(r'(?:#[^\n]*\n|\s)*("""|\'\'\')(.*?)\1', text, re.S)
        if m:
            first = text.count("\n", 0, m.start(2)) + 1
            for i, l in enumerate(m.group(2).split("\n")):
                out.append((first + i, l))
    for i, l in enumerate(text.split("\n"), 1):
        s = l.lstrip()
        if s.startswith("#!") and i == 1:
            continue
        if s.startswith("#"):
            out.append((i, s[1:]))
            continue
        # A trailing comment: '#' after a blank, with quotes balanced.
        for m in re.finditer(r"\s#\s", l):
            before = l[:m.start()]
            if before.count("'") % 2 == 0 and before.count('"') % 2 == 0 \
                    and "$" not in before[-2:]:
                out.append((i, l[m.end():]))
                break
    return out


def check_refs(tree, out):
    todo = []
    for f in tree.files:
        if f.endswith((".c", ".h")):
            cf = tree.c(f)
            for first, last, text, _ in cf.comments:
                for k, l in enumerate(text.split("\n")):
                    todo.append((f, first + k, l))
        elif script_kind(f):
            for ln, l in script_comments(f):
                todo.append((f, ln, l))
    for f, ln, l in todo:
        for m in FORBIDDEN.finditer(l):
            if os.path.splitext(os.path.basename(f))[0] in FORBIDDEN_OK:
                break
            out.append(f"{f}:{ln}: cites {m.group(1)}, which is outside the "
                       "repository: say it here, or cite the doc under "
                       "docs/ that does")
        clean = URLISH.sub(" ", l)
        for m in REF.finditer(clean):
            name = m.group(1)
            if FORBIDDEN.fullmatch(name) or name in EXTERNAL:
                continue
            if tree.resolve(name, os.path.dirname(f)) is not None:
                continue
            stems = [c.split(".")[0] for c in name.split("/")]
            if "..." in name or any(re.fullmatch(r"[A-Z][A-Z0-9_]*", c)
                                    and c not in REAL_CAPS for c in stems):
                continue
            out.append(f"{f}:{ln}: names {name}, which is not in the "
                       "repository")


CHECKS = {
    "threads": check_threads,
    "sections": check_sections,
    "order": check_order,
    "prefixes": check_prefixes,
    "refs": check_refs,
    "reach": check_reach,
}


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under | head
    which = sys.argv[1:] or list(CHECKS)
    for w in which:
        if w not in CHECKS:
            print(__doc__.split("\n\n")[-1], file=sys.stderr)
            return 2
    tree = Tree()
    counts = []
    for w in which:
        out = []
        CHECKS[w](tree, out)
        out = sorted(set(out), key=lambda s: (
            s.split(":")[0], int(s.split(":")[1]), s))
        for line in out:
            print(line)
        counts.append((w, len(out)))
    print("index: " + ", ".join(f"{w} {n}" for w, n in counts) +
          " finding(s)")
    return 1 if sum(n for _, n in counts) else 0


if __name__ == "__main__":
    sys.exit(main())
