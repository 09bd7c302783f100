#!/usr/bin/env python3
"""Held-out evaluation through llama.cpp (the shipped GGUF, as the extension runs it).

Gate: ROC AUC of P(<cc>) (read after <fim_prefix>L<fim_suffix>R<eof>) separating cross from infile tasks, and
retrieval rates at the model's threshold. Context use on cross tasks: exact match and edit similarity of the
greedy one-line completion without CC, with the retrieved CC and with the oracle CC (defining snippets).

  evaluate.py --gguf ../../test/fixtures/models/repogate-tiny.gguf --tokenizer work/tokenizer.json --eval work/eval.jsonl
  evaluate.py --ckpt work/model.pt --device cuda ...   (a torch checkpoint, to compare recipes where llama.cpp is absent)
"""
import argparse, json, struct
import torch
from tok import Tokenizer
from train import fim_sequence
import llama_run
import torch_run


def auc(pos, neg):
    """Probability that a random positive scores above a random negative (ties count half)."""
    allv = sorted([(p, 1) for p in pos] + [(n, 0) for n in neg])
    rank, i, s = 0.0, 0, 0.0
    ranks = {}
    while i < len(allv):
        j = i
        while j < len(allv) and allv[j][0] == allv[i][0]:
            j += 1
        avg = (i + j + 1) / 2
        for k in range(i, j):
            if allv[k][1]:
                s += avg
        i = j
    return (s - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def edit_sim(a, b):
    if not a and not b:
        return 1.0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return 1 - prev[-1] / max(len(a), len(b))


def gguf_threshold(path):
    """Reads repogate.gate_threshold from the GGUF metadata."""
    with open(path, 'rb') as f:
        data = f.read(4_000_000)
    key = b'repogate.gate_threshold'
    i = data.find(key)
    return struct.unpack('<f', data[i + len(key) + 4:i + len(key) + 8])[0]


def main():
    ap = argparse.ArgumentParser()
    model = ap.add_mutually_exclusive_group(required=True)
    model.add_argument('--gguf')
    model.add_argument('--ckpt')
    ap.add_argument('--device', default='cpu', help='with --ckpt')
    ap.add_argument('--tokenizer', required=True)
    ap.add_argument('--eval', required=True)
    ap.add_argument('--max-new', type=int, default=24)
    ap.add_argument('--limit', type=int, default=0, help='at most N tasks of each kind (0: all)')
    ap.add_argument('--out')
    args = ap.parse_args()
    tok = Tokenizer.load(args.tokenizer)
    sp = tok.special
    rows = [json.loads(l) for l in open(args.eval)]
    if args.limit:
        pick = lambda xs: xs[::max(1, len(xs) // args.limit)][:args.limit]
        rows = pick([s for s in rows if s['kind'] == 'cross']) + pick([s for s in rows if s['kind'] == 'infile'])
    items, keys = [], []
    for k, s in enumerate(rows):
        ids, _, gate_pos, _ = fim_sequence(tok, s, use_cc=False)
        items.append({'ids': ids[:gate_pos + 1], 'positions': [gate_pos]}); keys.append((k, 'gate'))
        conds = {'none': dict(s, cc='')}
        if s['kind'] == 'cross':
            conds['retrieved'] = s
            conds['oracle'] = dict(s, cc=s['oracle_cc'])
        for name, variant in conds.items():
            ids, _, _, mid_start = fim_sequence(tok, variant, use_cc=bool(variant['cc']))
            items.append({'ids': ids[:mid_start], 'positions': [], 'generate': args.max_new, 'stop': [sp['<|endoftext|>']]})
            keys.append((k, name))
    if args.gguf:
        res = llama_run.run(args.gguf, items, watch=[sp['<cc>']])
        thr = gguf_threshold(args.gguf)
    else:
        res = torch_run.run(args.ckpt, items, watch=[sp['<cc>']], device=args.device)
        thr = torch.load(args.ckpt, map_location='cpu')['threshold']
    pcc, gen = {}, {}
    for (k, name), r in zip(keys, res):
        if name == 'gate':
            pcc[k] = r['positions'][0]['watch'][str(sp['<cc>'])]
        else:
            text = tok.decode(r['generated']).lstrip('\n').split('\n')[0].rstrip()
            gen[(k, name)] = text
    cross = [k for k, s in enumerate(rows) if s['kind'] == 'cross']
    infile = [k for k, s in enumerate(rows) if s['kind'] == 'infile']
    report = {
        'tasks': {'cross': len(cross), 'infile': len(infile),
                  'packages': sorted(set(s['pkg'] for s in rows))},
        'gate_threshold': thr,
        'gate_auc_cross_vs_infile': auc([pcc[k] for k in cross], [pcc[k] for k in infile]),
        'mean_p_cc': {'cross': sum(pcc[k] for k in cross) / len(cross), 'infile': sum(pcc[k] for k in infile) / len(infile)},
        'retrieval_rate': {'cross': sum(pcc[k] > thr for k in cross) / len(cross),
                           'infile': sum(pcc[k] > thr for k in infile) / len(infile)},
        'retrieved_cc_has_all_novel_identifiers': sum(all(n in rows[k]['cc'] for n in rows[k]['novel']) for k in cross) / len(cross),
    }
    for name in ('none', 'retrieved', 'oracle'):
        em = [gen[(k, name)].strip() == rows[k]['middle'].strip() for k in cross]
        es = [edit_sim(gen[(k, name)].strip(), rows[k]['middle'].strip()) for k in cross]
        report[f'cross_{name}_cc'] = {'EM': sum(em) / len(em), 'ES': sum(es) / len(es)}
    sel = [gen[(k, 'retrieved' if pcc[k] > thr else 'none')] for k in cross]
    report['cross_gated'] = {'EM': sum(g.strip() == rows[k]['middle'].strip() for g, k in zip(sel, cross)) / len(cross),
                             'ES': sum(edit_sim(g.strip(), rows[k]['middle'].strip()) for g, k in zip(sel, cross)) / len(cross)}
    em = [gen[(k, 'none')].strip() == rows[k]['middle'].strip() for k in infile]
    es = [edit_sim(gen[(k, 'none')].strip(), rows[k]['middle'].strip()) for k in infile]
    report['infile_none_cc'] = {'EM': sum(em) / len(em), 'ES': sum(es) / len(es)}
    report['examples'] = [{'task': f"{rows[k]['pkg']}/{rows[k]['path']}", 'truth': rows[k]['middle'],
                           'none': gen[(k, 'none')], 'retrieved': gen[(k, 'retrieved')], 'oracle': gen[(k, 'oracle')],
                           'p_cc': pcc[k]} for k in cross[:8]]
    print(json.dumps(report, indent=1))
    if args.out:
        json.dump(report, open(args.out, 'w'), indent=1)


if __name__ == '__main__':
    main()
