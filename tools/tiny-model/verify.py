#!/usr/bin/env python3
"""Export fidelity: llama.cpp (GGUF, f16) against torch (the checkpoint, weights rounded to f16 as exported).

Held-out text: next-token top-5 lists must be identical (same ids, same order) at >= 95% of positions; gate
prompts from held-out tasks: |P(<cc>) llama.cpp - P(<cc>) torch| <= 1e-3.

  verify.py --ckpt work/model.pt --gguf ../../test/fixtures/models/repogate-tiny.gguf --tokenizer work/tokenizer.json \
            --corpus work/corpus --eval work/eval.jsonl
"""
import argparse, json, random, sys
import torch
from model import TinyLlama
from tok import Tokenizer, corpus_files
from train import fim_sequence
import llama_run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ckpt', required=True)
    ap.add_argument('--gguf', required=True)
    ap.add_argument('--tokenizer', required=True)
    ap.add_argument('--corpus', required=True)
    ap.add_argument('--eval', required=True)
    ap.add_argument('--chunks', type=int, default=12)
    ap.add_argument('--gates', type=int, default=40)
    ap.add_argument('--out')
    args = ap.parse_args()
    torch.set_num_threads(1)
    tok = Tokenizer.load(args.tokenizer)
    ck = torch.load(args.ckpt, map_location='cpu')
    model = TinyLlama(ck['config'])
    sd = {k: (v.half().float() if v.dim() >= 2 else v) for k, v in ck['model'].items()}
    model.load_state_dict(sd)
    model.eval()
    rnd = random.Random(1)
    files = sorted(corpus_files(args.corpus, 'heldout'))
    rnd.shuffle(files)
    items, kinds = [], []
    for f in files[:args.chunks]:
        ids = tok.encode(open(f, encoding='utf-8').read())[:160]
        items.append({'ids': ids, 'positions': 'all'}); kinds.append('text')
    rows = [json.loads(l) for l in open(args.eval)]
    rnd.shuffle(rows)
    cc = tok.special['<cc>']
    for s in rows[:args.gates]:
        ids, _, gate_pos, _ = fim_sequence(tok, s, use_cc=False)
        items.append({'ids': ids[:gate_pos + 1], 'positions': [gate_pos]}); kinds.append('gate')
    got = llama_run.run(args.gguf, items, watch=[cc])
    same5 = same5set = same1 = n = 0
    maxdiff_cc = 0.0
    maxdiff_top = 0.0
    with torch.no_grad():
        for item, kind, res in zip(items, kinds, got):
            probs = torch.softmax(model(torch.tensor([item['ids']]))[0].float(), -1)
            for pos in res['positions']:
                i = pos['i']
                t5 = torch.topk(probs[i], 5)
                mine = t5.indices.tolist()
                theirs = [int(a) for a, _ in pos['top5']]
                if kind == 'text':
                    n += 1
                    same5 += mine == theirs
                    same5set += set(mine) == set(theirs)
                    same1 += mine[0] == theirs[0]
                    for a, p in pos['top5']:
                        maxdiff_top = max(maxdiff_top, abs(probs[i][int(a)].item() - p))
                else:
                    maxdiff_cc = max(maxdiff_cc, abs(probs[i][cc].item() - pos['watch'][str(cc)]))
    report = {'positions': n, 'top5_identical': same5 / n, 'top5_same_set': same5set / n, 'top1_identical': same1 / n,
              'max_abs_diff_top5_prob': maxdiff_top, 'gate_prompts': sum(k == 'gate' for k in kinds),
              'max_abs_diff_p_cc': maxdiff_cc}
    ok = report['top5_identical'] >= 0.95 and maxdiff_cc <= 1e-3
    report['pass'] = ok
    print(json.dumps(report, indent=1))
    if args.out:
        json.dump(report, open(args.out, 'w'), indent=1)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
