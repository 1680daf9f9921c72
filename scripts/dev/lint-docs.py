#!/usr/bin/env python3
# make lint-docs: the docs' links resolve, and stay inside the repository.
#
# make lint-docs (part of make lint): the docs stand alone.  Python 3, no
# modules beyond the standard library.  Over README.md, docs/**/*.md and
# manifests/README.md it fails on:
#
#   (a) a relative link whose target is not in the tree: Markdown links and
#       images [text](path), reference definitions [ref]: path, and HTML
#       href/src.  The path is taken from the file's own directory and must
#       stay inside the repository.  An anchor (path#anchor, or #anchor in
#       the same file) into a Markdown file must name one of its headings,
#       slugged as GitHub does (lower case, punctuation dropped, spaces to
#       hyphens, -1, -2 for repeats).
#   (b) a link to anything outside the repository: a link whose target has
#       a scheme (https:, mailto:, ...), and any http:// or https:// URL in
#       prose, linked or bare.  The one exception is code, where real
#       command output and YAML live: inside a fenced block or an inline
#       `code span`, a URL may name a loopback host (localhost, 127.x.x.x,
#       [::1]), a cluster-internal one (NAME.svc, NAME.svc.cluster.local,
#       NAME.cluster.local) or an upper-case placeholder (POD_IP, HOST);
#       any other host fails there too.  (An apiVersion is no URL.)
#   (c) any mention of SPEC.md, DESIGN.md or ../shared, code included.
#
# Prints FILE:LINE: what, and exits 1 when anything was found.
# Usage: scripts/dev/lint-docs.py [FILE.md...]   (default: the files above)
import glob
import os
import re
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))

FENCE = re.compile(r'^\s*(`{3,}|~{3,})')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
URL = re.compile(r'https?://[^\s<>`"\')\]]*', re.I)
FORBIDDEN = re.compile(r'SPEC\.md|DESIGN\.md|\.\./shared', re.I)
LINK = re.compile(r'!?\[(?:[^\]\\]|\\.)*\]\(\s*(<[^>]*>|[^)\s]*)(?:\s+"[^"]*")?\s*\)')
REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*(\S+)')
HTML = re.compile(r'\b(?:href|src)\s*=\s*"([^"]*)"', re.I)
SCHEME = re.compile(r'^[a-z][a-z0-9+.-]*:', re.I)
CODE_HOST = re.compile(
    r'^(localhost|127(\.\d{1,3}){3}|\[::1\]'
    r'|[a-z0-9.-]+\.svc(\.cluster\.local)?|[a-z0-9.-]+\.cluster\.local'
    r'|[A-Z][A-Z0-9_]*)(:\d+)?$')

problems = []


def report(path, line, what):
    problems.append(f'{path}:{line}: {what}')


def code_spans(text):
    """(start, end) of each inline code span of a paragraph."""
    spans, pos = [], 0
    runs = list(re.finditer(r'`+', text))
    i = 0
    while i < len(runs):
        run = runs[i]
        if run.start() < pos:
            i += 1
            continue
        n = len(run.group())
        close = next((r for r in runs[i + 1:] if len(r.group()) == n), None)
        if close is None:
            i += 1
            continue
        spans.append((run.start(), close.end()))
        pos = close.end()
        i = runs.index(close) + 1
    return spans


def blocks(lines):
    """Yields (first line number, text, in_fence) for fenced blocks and
    for the paragraphs between them (blank lines split paragraphs)."""
    fence, buf, start = None, [], 1
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence is None:
            if m:
                if buf:
                    yield start, '\n'.join(buf), False
                fence, buf, start = m.group(1), [], n + 1
            elif line.strip() == '':
                if buf:
                    yield start, '\n'.join(buf), False
                buf, start = [], n + 1
            else:
                if not buf:
                    start = n
                buf.append(line)
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and line.strip() == m.group(1):
            yield start, '\n'.join(buf), True
            fence, buf, start = None, [], n + 1
        else:
            buf.append(line)
    if buf:
        yield start, '\n'.join(buf), fence is not None


def slug(text):
    t = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text.strip().lower())
    t = re.sub(r'[^\w\- ]', '', t)
    return t.replace(' ', '-')


anchors_cache = {}


def anchors(path):
    if path not in anchors_cache:
        seen, out = {}, set()
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
        fence = None
        for line in lines:
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)
                continue
            if fence is not None:
                if m and m.group(1)[0] == fence[0] and line.strip() == m.group(1):
                    fence = None
                continue
            h = HEADING.match(line)
            if h:
                s = slug(h.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                out.add(s if k == 0 else f'{s}-{k}')
        anchors_cache[path] = out
    return anchors_cache[path]


def check_url(path, line, url, in_code):
    if not in_code:
        report(path, line, f'a URL outside the repository: {url}')
        return
    host = re.sub(r'^[a-z]+://', '', url, flags=re.I).split('/')[0]
    if not CODE_HOST.match(host):
        report(path, line, f'a URL to another site, even in code: {url}')


def check_target(path, line, target):
    target = target.strip('<>')
    if target == '':
        report(path, line, 'an empty link target')
        return
    if SCHEME.match(target):
        # An http(s) one is reported once, by the URL rule.
        if not URL.match(target):
            report(path, line, f'a link outside the repository: {target}')
        return
    file, _, anchor = target.partition('#')
    here = os.path.dirname(path)
    dest = os.path.normpath(os.path.join(here, file)) if file else path
    if dest.startswith('..') or os.path.isabs(file):
        report(path, line, f'a link outside the repository: {target}')
        return
    if not os.path.exists(dest):
        report(path, line, f'a link to a file that does not exist: {target}')
        return
    if anchor and dest.endswith('.md') and anchor not in anchors(dest):
        report(path, line, f'a link to a heading that does not exist: {target}')


def check(path):
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for n, line in enumerate(lines, 1):
        for m in FORBIDDEN.finditer(line):
            report(path, n, f'mentions {m.group()}, which is not part of this repository')
    for start, text, in_fence in blocks(lines):
        def line_of(off, start=start, text=text):
            return start + text.count('\n', 0, off)
        if in_fence:
            for m in URL.finditer(text):
                check_url(path, line_of(m.start()), m.group(), True)
            continue
        spans = code_spans(text)
        for m in URL.finditer(text):
            code = any(a <= m.start() < b for a, b in spans)
            check_url(path, line_of(m.start()), m.group(), code)
        # Links are read with the code spans blanked out.
        prose = list(text)
        for a, b in spans:
            for i in range(a, b):
                if prose[i] != '\n':
                    prose[i] = ' '
        prose = ''.join(prose)
        for m in LINK.finditer(prose):
            check_target(path, line_of(m.start()), m.group(1))
        for m in HTML.finditer(prose):
            check_target(path, line_of(m.start()), m.group(1))
        off = 0
        for pline in prose.split('\n'):
            m = REFDEF.match(pline)
            if m:
                check_target(path, line_of(off), m.group(1))
            off += len(pline) + 1


def main():
    given = [os.path.abspath(p) for p in sys.argv[1:]]
    os.chdir(TOP)
    files = [os.path.relpath(p, TOP) for p in given] or (
        ['README.md'] + sorted(glob.glob('docs/**/*.md', recursive=True)) +
        ['manifests/README.md'])
    for path in files:
        check(path)
    for p in sorted(problems, key=lambda s: (s.split(':')[0], int(s.split(':')[1]))):
        print(p)
    if problems:
        print(f'lint-docs: {len(problems)} problems in {len(files)} files')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
