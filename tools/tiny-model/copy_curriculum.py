"""Synthetic copy drills in the Repoformer layout, made from real corpus files.

A 4 M-parameter model trained on a few million tokens of natural FIM samples never forms the attention pattern
that copying needs (find where the last tokens occur earlier, continue from there: an induction head), and real
copy lessons are too sparse to start it (research/README.md). These drills make copying the only way to lower the loss on
many tokens at once (research/README.md: on this budget they did not form one either):

- `lines`: the CC is a window of a corpus file rendered as the runtime renders CC; the left context is the file
  up to a line inside that window, the middle the next lines. Every middle token is in the CC, right after
  tokens that the left context ends with.
- `name`: the CC is a window of one file, the left context another file's code followed by a statement that
  starts a long name the CC declares (cut after its first token(s)); the middle is the rest of that name.
- `repeat_drill`: random tokens, then the same tokens again.

No gate loss: a drill's label says nothing about when context is needed.
"""
import os
import random
import re

import train  # the layout; used at call time (train imports this module)
from tok import corpus_files

HEADER = '// Here are some relevant code fragments from other files of the repo:'
RULE = '// --------------------------------------------------'
DRILL_LEFT, DRILL_CC, DRILL_MID = 128, 224, 96
NAME = re.compile(r'\b[A-Za-z_$][\w$]{7,}\b')
TEMPLATES = ['const {v} = {n}', 'return {n}', '{v} = {n}', 'await {n}', 'if ({n}', 'const {v} = await {n}',
             'export {{ {n}', 'new {n}', 'let {v} = {n}', '{n}']


def render_cc(path, lines):
    """The CC block exactly as src/retrieval/verbalize.ts renders one snippet."""
    body = [HEADER, RULE, '// the below code fragment can be found in:', f'// {path}', RULE]
    body += [f'// {l}' for l in lines]
    return '\n\n' + '\n'.join(body) + '\n'


def sequence(tok, left, right, cc, mid):
    """A drill in train.fim_layout with CC, each part cut to the drill budgets, no gate loss, the middle open."""
    ids, w, _, _ = train.fim_layout(tok.special, left[-DRILL_LEFT:], right[:train.MAX_RIGHT], cc[-DRILL_CC:], mid,
                                    gate_weight=0.0, end=False)
    return ids, w


def load_files(corpus, split, limit, rnd):
    files = list(corpus_files(corpus, split))
    rnd.shuffle(files)
    texts = []
    for f in files[:limit]:
        with open(f, encoding='utf-8') as fh:
            lines = fh.read().split('\n')
        if len(lines) >= 30:
            texts.append((os.path.relpath(f, corpus), lines))
    return texts


def line_drill(tok, rnd, path, lines):
    start = rnd.randrange(10, len(lines) - 12)
    n_mid = rnd.randint(2, 6)
    before, after = rnd.randint(1, 6), rnd.randint(0, 6)
    window = lines[max(0, start - before):start + n_mid + after]
    mid = tok.encode('\n'.join(lines[start:start + n_mid]))[:DRILL_MID]
    if len(mid) < 8:
        return None
    right = '\n'.join(lines[start + n_mid + after + 2:start + n_mid + after + 8]) if rnd.random() < 0.5 else ''
    left = tok.encode('\n'.join(lines[max(0, start - 60):start]) + '\n')
    return sequence(tok, left, tok.encode(right), tok.encode(render_cc(path, window)), mid)


def name_drill(tok, rnd, source, target):
    path, lines = source
    start = rnd.randrange(0, len(lines) - 16)
    window = lines[start:start + rnd.randint(6, 16)]
    names = sorted({m.group(0) for l in window for m in NAME.finditer(l)})
    rnd.shuffle(names)
    for name in names:
        toks = tok.encode(' ' + name)
        if len(toks) >= 3:
            break
    else:
        return None
    cut = rnd.randint(1, min(2, len(toks) - 2))
    # The statement's own left text ends with the name's first tokens, exactly as the CC tokenizes it.
    stmt = rnd.choice(TEMPLATES).format(v=rnd.choice(['result', 'value', 'out', 'x', 'item']), n='\x00')
    head, _ = stmt.split('\x00')
    t_lines = target[1]
    at = rnd.randrange(5, len(t_lines) - 5)
    indent = re.match(r'\s*', t_lines[at]).group(0)
    left_text = '\n'.join(t_lines[max(0, at - 60):at]) + '\n' + indent + head.rstrip(' ')
    # The name's head keeps the tokens the CC has for it.
    left = tok.encode(left_text) + toks[:cut]
    return sequence(tok, left, [], tok.encode(render_cc(path, window)), toks[cut:])


def drills(tok, corpus, n, seed, split='train', kinds=('lines', 'name')):
    """n drills (token ids, weights), half of each kind, from files of the corpus split."""
    rnd = random.Random(seed)
    files = load_files(corpus, split, 4000, rnd)
    out = []
    while len(out) < n:
        kind = kinds[len(out) % len(kinds)]
        if kind == 'lines':
            item = line_drill(tok, rnd, *rnd.choice(files))
        else:
            item = name_drill(tok, rnd, rnd.choice(files), rnd.choice(files))
        if item:
            out.append(item)
    return out


def repeat_drill(rnd, vocab, first_id=6):
    """Random tokens, then the same tokens again, the loss on the repeat only: the purest copy signal. The length
    varies so that no fixed offset solves it (one fixed length is learnt by position, not by matching tokens)."""
    n = rnd.randint(16, 120)
    a = [rnd.randrange(first_id, vocab) for _ in range(n)]
    # The repeat's first token cannot be known; every later one can.
    return a + a, [0.0] * n + [1.0] * (n - 1) + [0.0]
