#!/usr/bin/env python3
"""Does a checkpoint copy? Greedy next-token accuracy on copy drills of the held-out packages (copy_curriculum.py):
the middle of `lines` drills (lines that the CC holds verbatim), of `name` drills (the rest of a name the CC
declares) and the second half of random-token repeats. A model that copies gets most of them; one that does not
stays at what the code itself predicts (≈ 0.25, ≈ 0.08, 0).

  python3 research/copy_probe.py --tokenizer work/tokenizer.json --corpus work/corpus work/stage1.pt [more.pt ...]
"""
import argparse, os, random, sys
import torch

# The pipeline's modules live one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import copy_curriculum
import torch_run
from tok import Tokenizer


def accuracy(model, items, start_of):
    hit = tot = 0
    for ids, _ in items:
        x = torch.tensor([ids])
        with torch.no_grad():
            pred = model(x, torch.zeros_like(x))[0].argmax(-1).tolist()
        s = start_of(ids)
        hit += sum(p == g for p, g in zip(pred[s:-1], ids[s + 1:]))
        tot += len(ids) - 1 - s
    return hit / tot


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tokenizer', required=True)
    ap.add_argument('--corpus', required=True)
    ap.add_argument('--per-kind', type=int, default=60)
    ap.add_argument('checkpoints', nargs='+')
    args = ap.parse_args()
    torch.set_num_threads(1)
    tok = Tokenizer.load(args.tokenizer)
    middle = tok.special['<fim_middle>']
    sets = {k: copy_curriculum.drills(tok, args.corpus, args.per_kind, 7, split='heldout', kinds=(k,)) for k in ('lines', 'name')}
    rnd = random.Random(5)
    repeats = [copy_curriculum.repeat_drill(rnd, len(tok.tokens)) for _ in range(args.per_kind // 2)]
    for path in args.checkpoints:
        model = torch_run.load(path, 'cpu')
        scores = {k: accuracy(model, items, lambda ids: ids.index(middle)) for k, items in sets.items()}
        scores['repeat'] = accuracy(model, repeats, lambda ids: len(ids) // 2)
        print(path, ' '.join(f'{k} {v:.3f}' for k, v in scores.items()), flush=True)


if __name__ == '__main__':
    sys.exit(main())
