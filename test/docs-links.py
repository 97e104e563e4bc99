#!/usr/bin/env python3
"""The docs suite: the README and the pages of doc/ hold together.

Checks, each counted once in the closing line "docs: N passed, M failed":
  links     every relative Markdown link of README.md, doc/*.md and the other
            Markdown files of the tree (outside code) names a file of the tree, and every anchor (#...) a heading
            of the file it points into, by GitHub's rules (lower case, spaces
            to '-', punctuation removed, -1, -2, ... for repeated headings);
  pages     every page of doc/ is linked from README.md;
  length    README.md, the front page, is under 250 lines;
  commands  README.md starts with the two commands that work as root on a
            fresh Debian 12 machine: the demo and every test.
Python 3 standard library only; needs no server.  usage: test/docs-links.py
[repository top, default: the parent of this script's directory]
"""
import glob
import os
import re
import sys

top = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                      else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
os.chdir(top)

README_MAX_LINES = 250
FIRST_COMMANDS = ['bash test/demo.sh', 'bash test/run-all.sh']


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks"""
    fence = None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'^\s*(```+|~~~+)', line)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * 3
                elif m.group(1).startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield n, line.rstrip('\n')


def slug(heading):
    """GitHub's anchor of a heading's text"""
    t = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', heading)   # a link: its text
    t = t.strip().lower()
    t = re.sub(r'[^\w\- ]', '', t)                          # \w: letters, digits, _
    return t.replace(' ', '-')


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen = {}
        found = set()
        for _, line in prose_lines(path):
            m = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
            if m:
                s = slug(m.group(1))
                a = s if s not in seen else '%s-%d' % (s, seen[s])
                seen[s] = seen.get(s, 0) + 1
                found.add(a)
            for m in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', line):
                found.add(m.group(1))
        _anchors[path] = found
    return _anchors[path]


def links(path):
    """(line number, target) of the Markdown links outside code"""
    for n, line in prose_lines(path):
        line = re.sub(r'`[^`]*`', lambda m: ' ' * len(m.group(0)), line)
        for m in re.finditer(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)', line):
            yield n, m.group(1)


pages = sorted(glob.glob('doc/*.md'))
others = sorted(f for f in glob.glob('**/*.md', recursive=True)
                if f != 'README.md' and f not in pages and not f.startswith(('tmp_check', 'results')))
files = ['README.md'] + pages + others
problems = {'links': [], 'pages': [], 'length': [], 'commands': []}
nlinks = 0

for f in files:
    for n, target in links(f):
        if re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target):     # https:, mailto:
            continue
        nlinks += 1
        path, _, frag = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        if dest.startswith('..') or os.path.isabs(dest):
            problems['links'].append('%s:%d: %s leaves the tree' % (f, n, target))
            continue
        if not os.path.exists(dest):
            problems['links'].append('%s:%d: %s: no file %s' % (f, n, target, dest))
            continue
        if frag:
            if not dest.endswith('.md') or os.path.isdir(dest):
                problems['links'].append('%s:%d: %s: an anchor into %s, which is not a Markdown file'
                                         % (f, n, target, dest))
            elif frag not in anchors(dest):
                problems['links'].append('%s:%d: %s: no heading of %s has the anchor #%s'
                                         % (f, n, target, dest, frag))

readme_targets = {os.path.normpath(t.partition('#')[0]) for _, t in links('README.md')}
for p in pages:
    if p not in readme_targets:
        problems['pages'].append('%s is not linked from README.md' % p)

with open('README.md', encoding='utf-8') as fh:
    readme = fh.read().split('\n')
if readme and readme[-1] == '':
    readme.pop()
if len(readme) >= README_MAX_LINES:
    problems['length'].append('README.md has %d lines, at most %d'
                              % (len(readme), README_MAX_LINES - 1))

# the first thing after the title: a code block whose first commands are these
body = [l for l in readme[1:] if l.strip()]
ok = bool(body) and body[0].startswith('```')
if ok:
    block = []
    for l in body[1:]:
        if l.startswith('```'):
            break
        block.append(l.split('#')[0].strip())
    ok = block[:len(FIRST_COMMANDS)] == FIRST_COMMANDS
if not ok:
    problems['commands'].append('README.md must start (after its title) with a code block whose '
                                'first lines run %s' % ' and '.join(FIRST_COMMANDS))

passed = failed = 0
for check, ps in problems.items():
    if ps:
        failed += 1
        print('docs %s: FAILED' % check)
        for p in ps:
            print('  ' + p)
    else:
        passed += 1
        detail = {'links': ' (%d links in %d files)' % (nlinks, len(files)),
                  'pages': ' (%d pages)' % len(pages),
                  'length': ' (%d lines)' % len(readme)}.get(check, '')
        print('docs %s: ok%s' % (check, detail))
print('docs: %d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
