#!/usr/bin/env python3
# make lint-docs: every name the docs give exists in the code.
#
# make lint-docs (part of make lint), after lint-docs.py.  Python 3, no
# modules beyond the standard library.  Over README.md, docs/**/*.md,
# manifests/README.md and the man pages docs/man/* it fails on a name the
# code does not define, read from the code each run:
#
#   (a) a flag of our programs the program does not take: the long options
#       of the struct option array and the short ones of getopt_long in
#       bridge/main.c (slurm-bridge), admission/main.c
#       (slurm-bridge-admission) and epilog/main.c (slurm-bridge-epilog).
#       The docs also show flags of kubectl, helm, sbatch, make, ..., so a
#       flag is checked only where it is ours beyond doubt:
#         - on a command line whose command is one of our programs, in
#           any directory (/usr/local/sbin/slurm-bridge-epilog), after
#           sudo, exec, env or VAR=value: the flags up to the next |, ;,
#           && or ||, long and short, are that program's.  A command line
#           is a line of a sh, bash, shell or console fence (joined at a
#           trailing backslash; # starts a comment; here-documents are
#           skipped), a line after a $ prompt in an unlabelled fence (the
#           rest is output or prose), an inline code span, and a line of a
#           man page's literal display (prompt $ or #; \e continues);
#         - in a man page, every Fl: of the page's program (slurm-bridge.8:
#           slurm-bridge, ...), of the program an Nm earlier on the same
#           line names, and in slurm-bridge.conf.5 of either daemon;
#         - in a flags section of a page (under a heading that says flags
#           or options), a code span that starts with a dash: in a table's
#           first column, of the program the table's header names; in a
#           row or paragraph that starts with a program's name, of that
#           program; elsewhere in the section, of any of the three.
#   (b) a config key common/config.c does not read (every key it compares
#       a key of the file with).  A key is: the first column of a table
#       headed "key" in a section about the configuration, and in its rows
#       a `camelCase: value` span and the keys of a `- {key: ...}` one; a
#       table's column headed "config key"; a code span right after
#       "config's" or "configuration's", or a `key: value` one after
#       "config"; in the man pages, an .It Ic of slurm-bridge.conf.5 and
#       any Ic in camelCase (the others are commands: scontrol); the
#       top-level keys and those one level below them of a YAML config
#       file: a YAML fence whose first key is a config key and has no
#       apiVersion, the chart values' `config:` map, and
#       slurm-bridge.conf.5's EXAMPLES.
#   (c) an annotation, label, taint or finalizer key of our prefixes
#       (slinky.slurm.net/ and its subdomains, as common/policy.h defines
#       them, and our own slurm-bridge.io/), anywhere in a page, code
#       included, that is in no string of the daemons' C sources (include/,
#       libk8s/, common/, bridge/, admission/, epilog/) nor in the chart: a
#       slurmjob.slinky.slurm.net/ key is read as ANN_PREFIX "key" or by
#       translate.c's ann_*(..., "key").  In a table row's first column,
#       bare `names` after a `prefix/key` are keys of that prefix.  A key
#       that ends in -, / or * is a prefix, true when some key starts so.
#   (d) a make target neither the Makefile nor bench/bench.mk defines: the
#       words after make on a command line as in (a) (not VAR=value, not
#       options, not an upper-case placeholder), matched against the rules'
#       targets (simple variables expanded, % patterns matched).
#   (e) a metric name (slurm_bridge_..., anywhere in a page) no daemon
#       writes: the names metrics_family, metrics_one, metrics_counters,
#       metrics_hist_write and metrics_sample get in the daemons' C sources,
#       and httpd_metrics's "%s_..." families under the prefixes its callers
#       give.  NAME_bucket, NAME_sum and NAME_count are true only of a
#       histogram NAME; a name that ends in _ or * is a prefix; a `_rest`
#       code span after a full name on the same line is that name's daemon
#       prefix (slurm_bridge_ or slurm_bridge_admission_) plus rest.
#   (f) a Markdown page that ends mid-sentence: its last prose line (the
#       last non-blank line outside code fences, tables, headings and HTML
#       lines), with any closing * or _ of emphasis taken off, must end in
#       . : ! ? ) or a closing quote.  A list item is held to the same rule.
#
# Prints FILE:LINE: what, and exits 1 when anything was found.
# Usage: scripts/dev/lint-names.py [FILE...]   (default: the files above;
#        a FILE under a man/ directory or named NAME.N is read as a man page)
import glob
import importlib.util
import os
import re
import shlex
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))

PROGRAMS = {
    'slurm-bridge': 'bridge/main.c',
    'slurm-bridge-admission': 'admission/main.c',
    'slurm-bridge-epilog': 'epilog/main.c',
    'slurm-bridge-epilog-api': 'epilog/api.c',
}
# The daemons that read the config file (slurm-bridge.conf.5's flags).
CONF_READERS = ('slurm-bridge', 'slurm-bridge-admission')
C_DIRS = ('include', 'libk8s', 'common', 'bridge', 'admission', 'epilog')
CHART = 'manifests/chart'
MAKEFILES = ('Makefile', 'bench/bench.mk')

FENCE = re.compile(r'^\s*(`{3,}|~{3,})\s*([\w+-]*)')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
LIST_ITEM = re.compile(r'^\s*(?:[-*+]|\d+[.)])\s+')
FLAGS_HEADING = re.compile(r'\b(flags?|options?)\b', re.I)
CONFIG_HEADING = re.compile(r'\bconfig(uration)?\b', re.I)
OUR_KEY = re.compile(
    r'(?<![\w.-])((?:[a-z0-9-]+\.)*slinky\.slurm\.net/[A-Za-z0-9_.*-]*'
    r'|slurm-bridge\.io/[A-Za-z0-9_.*-]*)')
METRIC = re.compile(r'(?<![\w/.-])(slurm_bridge_[A-Za-z0-9_]*\*?)')
LONG_FLAG = re.compile(r'(?<![\w-])--([A-Za-z0-9][A-Za-z0-9-]*)')
MDOC_MACRO = re.compile(r'^[A-Z][a-z][a-z]?$')
CONFIG_BEFORE = re.compile(r"\bconfig(?:uration)?('s)?\s+$")
CAMEL = re.compile(r'^[a-z]+[A-Z][A-Za-z0-9]*$')
IDENT = re.compile(r'^[A-Za-z][A-Za-z0-9]*')
HIST_SUFFIXES = ('_bucket', '_sum', '_count')
SHELL_LANGS = ('sh', 'bash', 'shell', 'console', 'zsh')
CMD_PREFIXES = {'sudo', 'exec', 'env', 'time', 'nohup', 'command'}

problems = []


def report(path, line, what):
    problems.append((path, line, what))


def read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


# ---- the code: what it defines ---------------------------------------------

def c_code(src):
    """src with its comments blanked (newlines kept); strings kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c in '"\'':
            j = i + 1
            while j < n and src[j] != c and src[j] != '\n':
                j += 2 if src[j] == '\\' else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:j]))
            i = j
        elif src.startswith('//', i):
            j = src.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def c_sources():
    files = []
    for d in C_DIRS:
        files += sorted(glob.glob(os.path.join(d, '*.[ch]')))
    return {f: c_code(read(f)) for f in files}


def program_flags(main_c):
    """(long options, short option letters) of a main.c."""
    src = c_code(read(main_c))
    longs = set()
    for arr in re.finditer(r'struct\s+option\s+\w+\s*\[\s*\]\s*=\s*\{(.*?)\};',
                           src, re.S):
        longs |= set(re.findall(r'\{\s*"([^"]+)"', arr.group(1)))
    shorts = set()
    for m in re.finditer(r'getopt(?:_long)?\s*\([^,]+,[^,]+,\s*"([^"]*)"',
                         src):
        shorts |= set(m.group(1).replace(':', ''))
    if not longs:
        sys.exit(f'lint-names: no struct option array in {main_c}')
    return longs, shorts


def config_keys():
    """The keys common/config.c compares a key of the file with."""
    src = c_code(read('common/config.c'))
    keys = set(re.findall(
        r'strcmp\s*\(\s*(?:k|key|[\w>.-]*keys\[\w+\]->scalar)\s*,\s*"(\w+)"',
        src))
    if not keys:
        sys.exit('lint-names: no config keys found in common/config.c')
    return keys


def annotation_keys(csrc):
    keys = set()
    for src in csrc.values():
        for lit in re.findall(r'"((?:[^"\\\n]|\\.)*)"', src):
            keys |= set(OUR_KEY.findall(lit))
        for suffix in re.findall(r'\bANN_PREFIX\s+"([^"]+)"', src):
            keys.add('slurmjob.slinky.slurm.net/' + suffix)
    for suffix in re.findall(r'\bann_\w+\s*\(\s*\w+\s*,\s*"([^"]+)"',
                             csrc.get('common/translate.c', '')):
        keys.add('slurmjob.slinky.slurm.net/' + suffix)
    for f in sorted(glob.glob(os.path.join(CHART, '**', '*'), recursive=True)):
        if os.path.isfile(f):
            keys |= set(OUR_KEY.findall(read(f)))
    return {k.rstrip('.') for k in keys}


def metric_families(csrc):
    """(every family, the histograms)."""
    fams, hists, prefixes, formats = set(), set(), set(), set()
    for src in csrc.values():
        for m in re.finditer(
                r'\b(metrics_family|metrics_one|metrics_counters|'
                r'metrics_hist_write|metrics_sample)\s*\(\s*[^,()]+,\s*'
                r'"(slurm_bridge_\w+)"(?:\s*,\s*"(\w+)")?', src):
            fams.add(m.group(2))
            if m.group(1) == 'metrics_hist_write' or m.group(3) == 'histogram':
                hists.add(m.group(2))
        prefixes |= set(re.findall(
            r'\bhttpd_metrics\s*\([^;]*?"(slurm_bridge\w*)"\s*\)', src))
        formats |= set(re.findall(r'"%s(_\w+)"\s*,\s*prefix\b', src))
    for p in prefixes:
        for f in formats:
            fams.add(p + f)
    if not fams:
        sys.exit('lint-names: no metric families found in the C sources')
    return fams, hists


def make_targets():
    """(target names, % patterns as regexes) of the Makefiles."""
    text = '\n'.join(read(f) for f in MAKEFILES)
    lines = re.sub(r'\\\n', ' ', text).split('\n')
    defs, rules = {}, []
    in_define = False
    for line in lines:
        if in_define:
            in_define = not line.startswith('endef')
            continue
        if line.startswith('define '):
            in_define = True
            continue
        if line.startswith('\t') or line.lstrip().startswith('#'):
            continue
        d = re.match(r'^\s*(?:override\s+|export\s+)?([A-Za-z_][\w]*)\s*'
                     r'(?::=|::=|\?=|=)\s*(.*)$', line)
        if d:
            defs.setdefault(d.group(1), d.group(2).strip())
            continue
        depth, colon = 0, -1
        for i, c in enumerate(line):
            if c == '(' or c == '{':
                depth += 1
            elif c == ')' or c == '}':
                depth -= 1
            elif c == ':' and depth == 0:
                colon = i
                break
        if colon > 0 and '=' not in line[:colon] and \
                not line[colon + 1:].startswith('='):
            rules.append(line[:colon])

    def expand(s, depth=0):
        if depth > 8:
            return None

        def sub(m):
            v = defs.get(m.group(1))
            if v is None:
                raise KeyError
            e = expand(v, depth + 1)
            if e is None:
                raise KeyError
            return e
        try:
            return re.sub(r'\$[({]([A-Za-z_]\w*)[)}]', sub, s)
        except KeyError:
            return None

    names, patterns = set(), []
    for targets in rules:
        e = expand(targets)
        if e is None or '$' in e:
            continue
        for t in e.split():
            if t.startswith('.'):
                continue
            if '%' in t:
                patterns.append(re.compile(
                    '^' + re.escape(t).replace('%', '.+') + '$'))
            else:
                names.add(t)
    return names, patterns


class Code:
    def __init__(self):
        csrc = c_sources()
        self.flags = {p: program_flags(f) for p, f in PROGRAMS.items()}
        self.config = config_keys()
        self.annotations = annotation_keys(csrc)
        self.metrics, self.histograms = metric_families(csrc)
        self.targets, self.target_patterns = make_targets()


# ---- the checks, one name at a time ----------------------------------------

def check_flag(code, path, line, progs, flag):
    """flag: '--name' or '-x'; progs: the programs it may belong to."""
    if flag.startswith('--'):
        ok = any(flag[2:] in code.flags[p][0] for p in progs)
    else:
        ok = all(any(c in code.flags[p][1] for p in progs) for c in flag[1:])
    if not ok:
        who = ' or '.join(progs) if len(progs) < len(PROGRAMS) else \
            'any of our programs'
        report(path, line, f'{flag} is not a flag of {who}')


def check_config_key(code, path, line, key):
    if key not in code.config:
        report(path, line, f'config key {key} is not read by common/config.c')


def check_annotation(code, path, line, key):
    key = key.rstrip('.')
    if key.endswith('...'):
        key = key[:-3]
    # kubectl's "KEY-" removes KEY (kubectl annotate, label, taint).
    if key.endswith('-') and key[:-1] in code.annotations:
        return
    if key.endswith(('-', '/', '*')):
        stem = key.rstrip('*')
        if not any(k.startswith(stem) for k in code.annotations):
            report(path, line, f'no key of the code starts with {key}')
    elif key not in code.annotations:
        report(path, line,
               f'key {key} is in neither the C sources nor the chart')


def check_metric(code, path, line, name):
    if name.endswith(('_', '*')):
        stem = name.rstrip('*')
        if not any(f.startswith(stem) for f in code.metrics):
            report(path, line, f'no metric family starts with {name}')
        return
    if name in code.metrics:
        return
    for s in HIST_SUFFIXES:
        if name.endswith(s) and name[:-len(s)] in code.histograms:
            return
    report(path, line, f'metric {name} is not written by the code')


def check_target(code, path, line, target):
    if target in code.targets or \
            any(p.match(target) for p in code.target_patterns):
        return
    report(path, line, f'make {target}: no such target in the Makefile')


# ---- command lines ---------------------------------------------------------

def split_commands(text, prompts='$'):
    """The simple commands of one logical shell line, as token lists."""
    text = re.sub(r'^\s*[' + prompts + r']\s+', '', text)
    text = re.sub(r'(^|\s)#.*$', '', text)
    out = []
    for part in re.split(r'\|\||&&|;|\|', text):
        try:
            toks = shlex.split(part)
        except ValueError:
            toks = part.split()
        while toks and (toks[0] in CMD_PREFIXES or
                        re.match(r'^[A-Za-z_]\w*=', toks[0])):
            toks.pop(0)
        if toks:
            out.append(toks)
    return out


def check_command(code, path, line, text, prompts='$', lines=None):
    """One logical line; lines: its physical [(line, text)], to report a
    word on the line it is on."""
    lines = lines or [(line, text)]
    at = [0, 0]

    def line_of(word):
        for i in range(at[0], len(lines)):
            col = lines[i][1].find(word, at[1] if i == at[0] else 0)
            if col >= 0:
                at[0], at[1] = i, col + len(word)
                return lines[i][0]
        return lines[at[0]][0]
    for toks in split_commands(text, prompts):
        cmd = os.path.basename(toks[0])
        if cmd in PROGRAMS:
            for t in toks[1:]:
                n = line_of(t)
                t = t.strip('[](){}')
                if t == '--':
                    break
                if t.startswith('--'):
                    check_flag(code, path, n, [cmd], t.split('=')[0])
                elif re.match(r'^-[A-Za-z]+$', t):
                    check_flag(code, path, n, [cmd], t)
        elif cmd == 'make':
            skip = False
            for t in toks[1:]:
                n = line_of(t)
                if skip:
                    skip = False
                elif t in ('-C', '-f', '-I', '-o', '-W', '--directory',
                           '--file'):
                    skip = True
                elif t.startswith('-') or '=' in t or t.isdigit() or \
                        re.match(r'^[A-Z][A-Z_]*$', t) or \
                        not re.match(r'^[A-Za-z0-9_./%-]+$', t):
                    continue
                else:
                    check_target(code, path, n, t)


def check_shell(code, path, numbered, prompts='$', prompted=False):
    """numbered: [(line, text)], a shell script or session; prompted: only
    the lines after a prompt are commands (a transcript)."""
    buf, group, heredoc = '', [], None
    for n, text in numbered:
        if heredoc is not None:
            heredoc = None if text.strip() == heredoc else heredoc
            continue
        if not group and prompted and \
                not re.match(r'^\s*[' + prompts + r']\s', text):
            continue
        group.append((n, text))
        if text.rstrip().endswith('\\'):
            buf += text.rstrip()[:-1] + ' '
            continue
        check_command(code, path, group[0][0], buf + text, prompts, group)
        m = re.search(r'<<-?\s*[\'"]?(\w+)', buf + text)
        heredoc = m.group(1) if m else None
        buf, group = '', []
    if group:
        check_command(code, path, group[0][0], buf, prompts, group)


# ---- YAML: the keys of a config file ---------------------------------------

def flow_keys(text, state):
    """Keys of a flow mapping at depth 1 of state['depth'] (carried over
    lines); yields them as they come."""
    i, n = 0, len(text)
    expect_key = state.get('expect', False)
    while i < n:
        c = text[i]
        if c in '"\'':
            j = text.find(c, i + 1)
            i = n if j < 0 else j + 1
            continue
        if c in '{[':
            state['depth'] += 1
            state['kinds'].append(c)
            expect_key = c == '{'
        elif c in '}]':
            state['depth'] -= 1
            if state['kinds']:
                state['kinds'].pop()
            expect_key = False
        elif c == ',':
            expect_key = bool(state['kinds']) and state['kinds'][-1] == '{'
        elif expect_key and not c.isspace():
            m = re.match(r'([A-Za-z_][\w.-]*)\s*:', text[i:])
            if m and state['depth'] == 1 and state['kinds'][-1] == '{':
                yield m.group(1)
            expect_key = False
            if m:
                i += m.end()
                continue
        i += 1
    state['expect'] = expect_key


def yaml_keys(numbered):
    """(line, path) of each key of a block YAML text, to two levels (a
    sequence adds no level; flow mappings count)."""
    stack, scalar_indent, flow = [], None, None
    out = []
    for n, raw in numbered:
        line = re.sub(r'(^|\s)#.*$', '', raw.rstrip())
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if flow is not None:
            for k in flow_keys(line, flow['state']):
                out.append((n, flow['path'] + (k,)))
            if flow['state']['depth'] <= 0:
                flow = None
            continue
        if scalar_indent is not None:
            if indent > scalar_indent:
                continue
            scalar_indent = None
        content = line.strip()
        item = False
        while content.startswith('- ') or content == '-':
            item = True
            indent += 2
            content = content[2:].lstrip()
        while stack and (stack[-1][0] > indent - (2 if item else 0) or
                         (stack[-1][0] == indent and not item) or
                         (item and stack[-1][0] >= indent)):
            stack.pop()
        parent = tuple(k for _, k in stack)
        m = re.match(r'^([A-Za-z_][\w.-]*)\s*:(?:\s+(.*))?$', content)
        if not m:
            if content.startswith('{'):
                st = {'depth': 0, 'kinds': []}
                for k in flow_keys(content, st):
                    out.append((n, parent + (k,)))
                if st['depth'] > 0:
                    flow = {'state': st, 'path': parent}
            continue
        key, value = m.group(1), (m.group(2) or '').strip()
        out.append((n, parent + (key,)))
        stack.append((indent, key))
        if re.match(r'^[|>][-+0-9]*$', value):
            scalar_indent = indent
        elif value.startswith('{'):
            st = {'depth': 0, 'kinds': []}
            for k in flow_keys(value, st):
                out.append((n, parent + (key, k)))
            if st['depth'] > 0:
                flow = {'state': st, 'path': parent + (key,)}
    return out


def check_config_yaml(code, path, numbered, under=()):
    """The keys of a config file (under: the path of the file's map)."""
    for n, p in yaml_keys(numbered):
        if p[:len(under)] != under or len(p) == len(under):
            continue
        p = p[len(under):]
        if len(p) <= 2:
            check_config_key(code, path, n, p[-1])


def check_yaml_fence(code, path, numbered):
    keys = yaml_keys(numbered)
    top = [p[0] for _, p in keys if len(p) == 1]
    if 'apiVersion' in top or 'kind' in top or not top:
        return
    if top[0] in code.config:
        check_config_yaml(code, path, numbered)
    elif 'config' in top:
        check_config_yaml(code, path, numbered, ('config',))


# ---- Markdown --------------------------------------------------------------

def _lint_docs():
    """scripts/dev/lint-docs.py as a module: its Markdown readers."""
    spec = importlib.util.spec_from_file_location(
        'lint_docs', os.path.join(os.path.dirname(__file__), 'lint-docs.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


LINT_DOCS = _lint_docs()


def code_spans(text):
    """(start, end, content) of each inline code span of a paragraph
    (lint-docs.py finds them)."""
    out = []
    for start, end in LINT_DOCS.code_spans(text):
        n = len(re.match(r'`+', text[start:]).group())
        out.append((start, end,
                    text[start + n:end - n].replace('\n', ' ').strip()))
    return out


def split_cells(row):
    """(offset, text) of each cell of a table row."""
    cells, start = [], 0
    s = row.strip()
    lead = len(row) - len(row.lstrip())
    if s.startswith('|'):
        start = 1
    i = start
    while i <= len(s):
        if i == len(s) or (s[i] == '|' and s[i - 1] != '\\'):
            if i > start or i < len(s):
                cells.append((lead + start, s[start:i]))
            start = i + 1
        i += 1
    if cells and s.endswith('|') and cells[-1][1] == '':
        cells.pop()
    return cells


def program_named(text):
    t = text.strip().strip('`').strip()
    return t if t in PROGRAMS else None


def check_unit(code, path, unit):
    """A paragraph, a list item or a table row: its inline names."""
    kind, start, text, sections, header = unit

    def line_of(off):
        return start + text.count('\n', 0, off)
    in_flags = any(FLAGS_HEADING.search(h) for h in sections)
    in_config = any(CONFIG_HEADING.search(h) for h in sections)
    cells = split_cells(text) if kind == 'table' else [(0, text)]
    head = [c.strip().strip('`').strip().lower() for _, c in header or []]
    for col, (off, cell) in enumerate(cells):
        spans = [(a + off, b + off, c) for a, b, c in code_spans(cell)]
        # Command lines in code spans: (a) and (d).
        for a, b, c in spans:
            raw = text[a:b].strip('`').split('\n')
            check_command(code, path, line_of(a), c, lines=[
                (line_of(a) + i, t) for i, t in enumerate(raw)])
        # (a) flags in a flags section.
        if in_flags:
            progs = list(PROGRAMS)
            lead = re.sub(r'^\s*(?:[-*+]|\d+[.)])\s+', '', cell)
            m = re.match(r'\s*`([^`]+)`', lead)
            if kind == 'table' and col == 0 and header and \
                    program_named(header[0][1]):
                progs = [program_named(header[0][1])]
            elif m and program_named(m.group(1)) and col == 0:
                progs = [program_named(m.group(1))]
            for a, _, c in spans:
                if not c.startswith('-'):
                    continue
                for f in LONG_FLAG.findall(c):
                    check_flag(code, path, line_of(a), progs, '--' + f)
                m = re.match(r'^(-[A-Za-z]+)(\s|$)', c)
                if m:
                    check_flag(code, path, line_of(a), progs, m.group(1))
        # (b) config keys.
        if kind == 'table' and col < len(head):
            is_key_col = head[col] in ('config key', 'configuration key') or \
                (col == 0 and head[0] == 'key' and in_config)
            if is_key_col:
                for a, _, c in spans:
                    m = IDENT.match(c)
                    if m:
                        check_config_key(code, path, line_of(a), m.group())
        if kind == 'table' and head[:1] == ['key'] and in_config:
            for a, _, c in spans:
                m = re.match(r'^([a-z]+[A-Z][A-Za-z0-9]*):\s', c)
                if m:
                    check_config_key(code, path, line_of(a), m.group(1))
                elif c.startswith('- {'):
                    for k in flow_keys(c[2:], {'depth': 0, 'kinds': []}):
                        check_config_key(code, path, line_of(a), k)
        for a, _, c in spans:
            before = CONFIG_BEFORE.search(text[max(0, a - 40):a])
            if not before:
                continue
            if before.group(1):
                for part in c.split('.'):
                    m = IDENT.match(part)
                    if m and m.group() == part.split(':')[0].strip():
                        check_config_key(code, path, line_of(a), m.group())
            else:
                m = re.match(r'^([A-Za-z][A-Za-z0-9]*):\s', c)
                if m:
                    check_config_key(code, path, line_of(a), m.group(1))
        # (c) bare names after a prefixed key in a table's first column.
        if kind == 'table' and col == 0:
            prefix = None
            for a, _, c in spans:
                k = OUR_KEY.fullmatch(c)
                if k:
                    prefix = c[:c.rindex('/') + 1]
                elif prefix and re.fullmatch(r'[a-z][a-z0-9-]*', c):
                    check_annotation(code, path, line_of(a), prefix + c)
                elif re.fullmatch(r'[\w.-]+/[\w.-]*', c):
                    prefix = None
        # (e) `_rest` after a full metric name.
        last = None
        for a, _, c in spans:
            name = c.split('{')[0]
            if name.startswith('slurm_bridge_'):
                last = 'slurm_bridge_admission_' if \
                    name.startswith('slurm_bridge_admission_') else \
                    'slurm_bridge_'
            elif last and re.fullmatch(r'_[a-z0-9_]+', name):
                check_metric(code, path, line_of(a), last + name[1:])


def check_md(code, path):
    lines = read(path).split('\n')
    fence, fence_lines, fence_lang = None, [], ''
    sections = []           # [(level, text)]
    units = []
    para, para_start = [], 0
    table_header = None
    last_prose = None

    def flush():
        nonlocal para
        if not para:
            return
        # Split into list items; each item is a unit of its own.
        item, item_start = [], para_start
        for i, t in enumerate(para):
            if LIST_ITEM.match(t) and item:
                units.append(('list', item_start, '\n'.join(item),
                              [h for _, h in sections], None))
                item, item_start = [], para_start + i
            item.append(t)
        kind = 'list' if LIST_ITEM.match(para[0]) else 'para'
        units.append((kind, item_start, '\n'.join(item),
                      [h for _, h in sections], None))
        para = []

    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and \
                    len(m.group(1)) >= len(fence) and \
                    line.strip() == m.group(1):
                if fence_lang in ('yaml', 'yml'):
                    check_yaml_fence(code, path, fence_lines)
                elif fence_lang in SHELL_LANGS:
                    check_shell(code, path, fence_lines)
                elif fence_lang == '':
                    check_shell(code, path, fence_lines, prompted=True)
                fence = None
            else:
                fence_lines.append((n, line))
            continue
        if m:
            flush()
            fence, fence_lines, fence_lang = m.group(1), [], m.group(2).lower()
            table_header = None
            continue
        s = line.strip()
        h = HEADING.match(line)
        if h:
            flush()
            level = len(h.group(1))
            while sections and sections[-1][0] >= level:
                sections.pop()
            sections.append((level, h.group(2)))
            table_header = None
            continue
        if s.startswith('|'):
            flush()
            if re.match(r'^\|?[\s:|-]+\|?$', s) and '-' in s:
                continue
            if table_header is None:
                table_header = split_cells(line)
                units.append(('table', n, line, [h for _, h in sections],
                              []))
            else:
                units.append(('table', n, line, [h for _, h in sections],
                              table_header))
            continue
        table_header = None
        if s == '':
            flush()
            continue
        if not para:
            para_start = n
        para.append(line)
        if not s.startswith('<') and not re.match(r'^\[[^\]]+\]:', s):
            last_prose = (n, s)
    flush()
    for unit in units:
        check_unit(code, path, unit)
    for n, line in enumerate(lines, 1):
        for k in OUR_KEY.findall(line):
            check_annotation(code, path, n, k)
        for k in METRIC.findall(line):
            check_metric(code, path, n, k)
    # (f) the page ends on a whole sentence.
    if last_prose is not None:
        n, s = last_prose
        end = s.rstrip('*_ ')
        if not re.search(r'[.:!?)"\'\u201d\u2019]$', end):
            report(path, n, 'the page ends mid-sentence: '
                   f'...{s[-40:]}')


# ---- man pages (mdoc) ------------------------------------------------------

def man_program(path):
    name = os.path.basename(path)
    name = re.sub(r'\.\d\w*$', '', name)
    if name in PROGRAMS:
        return [name]
    if name == 'slurm-bridge.conf':
        return list(CONF_READERS)
    return list(PROGRAMS)


def mdoc_tokens(line):
    try:
        return shlex.split(line[1:], posix=True)
    except ValueError:
        return line[1:].split()


def check_man(code, path):
    lines = [l.replace('\\-', '-').replace('\\&', '').replace('\\e', '\\')
             for l in read(path).split('\n')]
    conf = os.path.basename(path).startswith('slurm-bridge.conf.')
    progs = man_program(path)
    section, display = '', None
    for n, line in enumerate(lines, 1):
        for k in OUR_KEY.findall(line):
            check_annotation(code, path, n, k)
        for k in METRIC.findall(line):
            check_metric(code, path, n, k)
        if display is not None:
            if line.startswith('.Ed'):
                check_shell(code, path, display, prompts='$#')
                if conf and section == 'EXAMPLES':
                    check_config_yaml(code, path, display)
                display = None
            else:
                display.append((n, line))
            continue
        if not line.startswith('.'):
            continue
        toks = mdoc_tokens(line)
        if toks[:1] == ['Sh']:
            section = ' '.join(toks[1:])
        if toks[:1] == ['Bd']:
            display = []
            continue
        owner, in_fl = progs, False
        for i, t in enumerate(toks):
            if MDOC_MACRO.match(t):
                in_fl = t == 'Fl'
                if t == 'Nm' and i + 1 < len(toks) and toks[i + 1] in PROGRAMS:
                    owner = [toks[i + 1]]
                if t == 'Ic' and i + 1 < len(toks):
                    k = toks[i + 1]
                    if CAMEL.match(k) or (conf and i == 1 and toks[0] == 'It'):
                        check_config_key(code, path, n, k)
                continue
            if not in_fl or t in ('|', ',', ';', '.', ':', ')', '(', '['):
                continue
            if re.match(r'^-[A-Za-z0-9][A-Za-z0-9-]*$', t):
                check_flag(code, path, n, owner, '-' + t)
            elif re.match(r'^[A-Za-z]+$', t):
                check_flag(code, path, n, owner, '-' + t)


# ---- main ------------------------------------------------------------------

def is_man(path):
    return os.path.basename(os.path.dirname(path)) == 'man' or \
        re.search(r'\.\d$', path) is not None


def main():
    given = [os.path.abspath(p) for p in sys.argv[1:]]
    os.chdir(TOP)
    code = Code()
    files = [os.path.relpath(p, TOP) if p.startswith(TOP + os.sep) else p
             for p in given] or (
        ['README.md'] + sorted(glob.glob('docs/**/*.md', recursive=True)) +
        ['manifests/README.md'] + sorted(glob.glob('docs/man/*')))
    for path in files:
        if is_man(path):
            check_man(code, path)
        else:
            check_md(code, path)
    seen = set()
    for p, n, what in sorted(problems):
        if (p, n, what) not in seen:
            seen.add((p, n, what))
            print(f'{p}:{n}: {what}')
    if problems:
        print(f'lint-names: {len(seen)} problems in {len(files)} files')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
