#!/usr/bin/env python3
"""Byte-level BPE that llama.cpp reproduces exactly: tokenizer.ggml.model = gpt2, tokenizer.ggml.pre = command-r.

The pre-tokenizer mirrors llama.cpp's (src/unicode.cpp): first every \\p{N} code point is split off on its own,
then each piece is split by the GPT-2 pattern 's|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+
with llama.cpp's own whitespace set. Merges are applied lowest rank first, leftmost first.

  train: tok.py train CORPUS_DIR --vocab 4096 --out tokenizer.json [--max-bytes N]
"""
import argparse, heapq, json, os, random, sys, unicodedata
from collections import Counter, defaultdict

SPECIALS = ['<|endoftext|>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<eof>', '<cc>']

# llama.cpp unicode_set_whitespace
WHITESPACE = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
              0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000}

_cls_cache = {}


def char_class(c):
    """'w' whitespace, 'L' letter, 'N' number, 'P' anything else."""
    k = _cls_cache.get(c)
    if k is None:
        o = ord(c)
        if o in WHITESPACE:
            k = 'w'
        else:
            cat = unicodedata.category(c)
            k = 'L' if cat[0] == 'L' else 'N' if cat[0] == 'N' else 'P'
        _cls_cache[c] = k
    return k


def _gpt2_split(s, out):
    n = len(s)
    cls = [char_class(c) for c in s]
    pos = 0
    while pos < n:
        c = s[pos]
        if c == "'" and pos + 1 < n:
            nx = s[pos + 1]
            if nx in 'stmd':
                out.append(s[pos:pos + 2]); pos += 2; continue
            if pos + 2 < n and s[pos + 1:pos + 3] in ('re', 've', 'll'):
                out.append(s[pos:pos + 3]); pos += 3; continue
        k2 = (cls[pos + 1] if pos + 1 < n else None) if c == ' ' else cls[pos]
        if k2 in ('L', 'N', 'P'):
            start = pos
            if c == ' ':
                pos += 1
            while pos < n and cls[pos] == k2:
                pos += 1
            out.append(s[start:pos]); continue
        nw = 0
        while pos + nw < n and cls[pos + nw] == 'w':
            nw += 1
        if nw > 1 and pos + nw < n:
            out.append(s[pos:pos + nw - 1]); pos += nw - 1; continue
        if nw > 0:
            out.append(s[pos:pos + nw]); pos += nw; continue
        out.append(s[pos]); pos += 1


def pretokenize(text):
    out = []
    start = 0
    for i, c in enumerate(text):
        if char_class(c) == 'N':
            if i > start:
                _gpt2_split(text[start:i], out)
            out.append(c)
            start = i + 1
    if start < len(text):
        _gpt2_split(text[start:], out)
    return out


def bytes_to_unicode():
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()
U2B = {v: k for k, v in B2U.items()}


def to_units(piece):
    return ''.join(B2U[b] for b in piece.encode('utf-8'))


class Tokenizer:
    def __init__(self, tokens, merges):
        self.tokens = tokens                      # id -> string (byte-level unicode form or special)
        self.id = {t: i for i, t in enumerate(tokens)}
        self.merges = merges                      # list of (a, b)
        self.rank = {m: i for i, m in enumerate(merges)}
        self.special = {t: self.id[t] for t in SPECIALS}
        self.cache = {}

    @classmethod
    def load(cls, path):
        with open(path) as f:
            d = json.load(f)
        return cls(d['tokens'], [tuple(m.split(' ', 1)) for m in d['merges']])

    def save(self, path):
        with open(path, 'w') as f:
            json.dump({'tokens': self.tokens, 'merges': [a + ' ' + b for a, b in self.merges], 'specials': SPECIALS}, f,
                      ensure_ascii=False)

    def _bpe(self, word):
        hit = self.cache.get(word)
        if hit is not None:
            return hit
        syms = list(word)
        while len(syms) > 1:
            best, bi = None, -1
            for i in range(len(syms) - 1):
                r = self.rank.get((syms[i], syms[i + 1]))
                if r is not None and (best is None or r < best):
                    best, bi = r, i
            if best is None:
                break
            syms[bi:bi + 2] = [syms[bi] + syms[bi + 1]]
        ids = [self.id[s] for s in syms]
        if len(self.cache) < 500000:
            self.cache[word] = ids
        return ids

    def encode(self, text):
        """Plain text (special token strings are NOT parsed, as with llama.cpp parse_special=false)."""
        ids = []
        for p in pretokenize(text):
            ids.extend(self._bpe(to_units(p)))
        return ids

    def decode_bytes(self, ids):
        out = bytearray()
        for i in ids:
            t = self.tokens[i]
            if t in self.special:
                out += t.encode()
            else:
                out += bytes(U2B[c] for c in t)
        return bytes(out)

    def decode(self, ids):
        return self.decode_bytes(ids).decode('utf-8', errors='replace')


def train(word_counts, vocab_size):
    base = [B2U[b] for b in range(256)]
    tokens = SPECIALS + base
    known = set(tokens)
    words = []
    counts = []
    for w, c in word_counts.items():
        words.append(list(w)); counts.append(c)
    pair_count = defaultdict(int)
    where = defaultdict(set)
    for wi, syms in enumerate(words):
        for a, b in zip(syms, syms[1:]):
            pair_count[(a, b)] += counts[wi]
            where[(a, b)].add(wi)
    heap = [(-c, p) for p, c in pair_count.items()]
    heapq.heapify(heap)
    merges = []
    while len(tokens) < vocab_size and heap:
        negc, pair = heapq.heappop(heap)
        if pair_count.get(pair, 0) != -negc or negc == 0:
            continue
        a, b = pair
        ab = a + b
        merges.append(pair)
        if ab not in known:
            tokens.append(ab); known.add(ab)
        changed = set()
        for wi in list(where[pair]):
            syms = words[wi]
            c = counts[wi]
            for x, y in zip(syms, syms[1:]):
                pair_count[(x, y)] -= c
                changed.add((x, y))
                where[(x, y)].discard(wi)
            i, new = 0, []
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == a and syms[i + 1] == b:
                    new.append(ab); i += 2
                else:
                    new.append(syms[i]); i += 1
            words[wi] = new
            for x, y in zip(new, new[1:]):
                pair_count[(x, y)] += c
                changed.add((x, y))
                where[(x, y)].add(wi)
        for p in changed:
            cnt = pair_count.get(p, 0)
            if cnt <= 0:
                pair_count.pop(p, None); where.pop(p, None)
            elif p != pair:
                heapq.heappush(heap, (-cnt, p))
        pair_count.pop(pair, None); where.pop(pair, None)
    return Tokenizer(tokens, merges)


def corpus_files(root, split='train'):
    with open(os.path.join(root, 'manifest.json')) as f:
        man = json.load(f)
    for p in man['packages']:
        if p['split'] != split:
            continue
        base = os.path.join(root, p['folder'])
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            for fn in sorted(filenames):
                yield os.path.join(dirpath, fn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('cmd', choices=['train'])
    ap.add_argument('corpus')
    ap.add_argument('--vocab', type=int, default=4096)
    ap.add_argument('--max-bytes', type=int, default=12_000_000)
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    wc = Counter()
    total = 0
    files = list(corpus_files(args.corpus))
    random.Random(0).shuffle(files)  # a deterministic spread over packages
    for path in files:
        with open(path, encoding='utf-8') as f:
            text = f.read()
        total += len(text)
        for p in pretokenize(text):
            wc[to_units(p)] += 1
        if total > args.max_bytes:
            break
    # The control tokens' text forms are never merged into; words of length 1 carry no pairs.
    wc = Counter({w: c for w, c in wc.items() if len(w) > 1})
    tok = train(wc, args.vocab)
    tok.save(args.out)
    print(f'trained on {total} chars, {len(wc)} distinct words -> {len(tok.tokens)} tokens, {len(tok.merges)} merges')


if __name__ == '__main__':
    main()
