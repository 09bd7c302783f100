#!/usr/bin/env python3
"""Trains the tiny model with the Repoformer layout on CPU.

Every FIM sample is  <fim_prefix>L<fim_suffix>R<eof>[<cc>CC]<fim_middle>Y<|endoftext|>  where the token after
<eof> is the self-assessment target (<cc> when the label says cross-file context is needed, else <fim_middle>)
and Y carries the generation loss (Repoformer's two losses; weights below). L, R and CC carry a smaller language
modelling loss so that the tiny model also learns plain left-to-right (prefix) completion, and some samples have
an empty R (prefix-only completion). A share of plain file chunks (no special tokens) is mixed in.

  OPENBLAS_NUM_THREADS=1 python3 train.py --tokenizer work/tokenizer.json --samples work/train.jsonl \
      --corpus work/corpus --steps 1300 --out work/model.pt    (see reproduce.sh)
"""
import argparse, json, math, os, random, sys, time
import numpy as np
import torch
import torch.nn.functional as F
from model import CONFIG, TinyLlama
from tok import Tokenizer, corpus_files
import copy_curriculum

MAX_LEFT, MAX_RIGHT, MAX_CC, MAX_MID = 192, 48, 224, 40
ROW = 512
W_LEFT, W_RIGHT, W_CC, W_GATE, W_MID = 0.5, 0.25, 0.25, 3.0, 1.0


def fim_layout(sp, left, right, cc, mid, gate_weight=W_GATE, end=True):
    """The Repoformer layout of token ids (CC present iff cc) and per-target loss weights (weights[i] is the weight
    of predicting ids[i+1]); also the position that predicts <cc>/<fim_middle> and where the middle starts.
    end=False leaves the middle open (no <|endoftext|> target)."""
    ids, w = [sp['<fim_prefix>']], []
    ids += left; w += [0.0] + [W_LEFT] * (len(left) - 1) if left else []
    ids.append(sp['<fim_suffix>']); w.append(0.0)
    ids += right; w += [W_RIGHT] * len(right)
    ids.append(sp['<eof>']); w.append(0.0)
    gate_pos = len(ids) - 1                      # predicts <cc> or <fim_middle>
    if cc:
        ids.append(sp['<cc>']); w.append(gate_weight)
        ids += cc; w += [W_CC] * len(cc)
        ids.append(sp['<fim_middle>']); w.append(0.0)
    else:
        ids.append(sp['<fim_middle>']); w.append(gate_weight)
    mid_start = len(ids)
    ids += mid; w += [W_MID] * len(mid)
    if end:
        ids.append(sp['<|endoftext|>']); w.append(W_MID)
    w.append(0.0)
    return ids, w, gate_pos, mid_start


def fim_sequence(tok, s, prefix_only=False, use_cc=None):
    """fim_layout of a sample's texts, each part cut to its budget.
    use_cc: None = follow the label (training); True/False = force (evaluation)."""
    left = tok.encode(s['left'])[-MAX_LEFT:]
    right = [] if prefix_only else tok.encode(s['right'])[:MAX_RIGHT]
    with_cc = bool(s['label']) if use_cc is None else use_cc
    cc = tok.encode(s['cc'])[-MAX_CC:] if with_cc and s['cc'] else []
    return fim_layout(tok.special, left, right, cc, tok.encode(s['middle'])[:MAX_MID])


def lm_chunks(tok, corpus, n_tokens, length, seed):
    files = list(corpus_files(corpus))
    rnd = random.Random(seed)
    rnd.shuffle(files)
    out, total = [], 0
    for f in files:
        with open(f, encoding='utf-8') as fh:
            ids = tok.encode(fh.read())
        for i in range(0, max(1, len(ids) - 32), length):
            chunk = ids[i:i + length]
            if len(chunk) >= 32:
                out.append((chunk, [1.0] * (len(chunk) - 1) + [0.0]))
                total += len(chunk)
        if total >= n_tokens:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tokenizer', required=True)
    ap.add_argument('--samples', required=True)
    ap.add_argument('--corpus', required=True)
    ap.add_argument('--steps', type=int, default=700)
    ap.add_argument('--batch-tokens', type=int, default=3072, help='a multiple of ROW')
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--lm-share', type=float, default=0.15)
    ap.add_argument('--prefix-only-share', type=float, default=0.15)
    ap.add_argument('--max-minutes', type=float, default=0, help='stop early (saves the checkpoint as usual)')
    ap.add_argument('--positive-share', type=float, default=0, help='share of FIM draws from positive (<cc>) samples; 0: natural mix')
    ap.add_argument('--oracle-cc-share', type=float, default=0,
                    help='share of positive samples whose CC is the oracle (the defining snippets of the novel identifiers)')
    ap.add_argument('--copy-samples', help='copy lessons (make_samples.js --ident-spans-per-file): the cursor at or inside a name declared in another file')
    ap.add_argument('--copy-share', type=float, default=0, help='share of FIM draws from --copy-samples')
    ap.add_argument('--drills', type=int, default=0, help='synthetic copy drills to make (copy_curriculum.py)')
    ap.add_argument('--drill-kinds', default='lines,name', help='which drills (copy_curriculum.drills kinds)')
    ap.add_argument('--drill-share', type=float, default=0, help='share of FIM draws from the drills')
    ap.add_argument('--repeat-share', type=float, default=0, help='share of draws that are random-token repeats (copy_curriculum.repeat_drill)')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--device', default='cpu', help='cuda runs the same recipe on a GPU (to try recipes quickly; float sums differ from CPU)')
    ap.add_argument('--save-every', type=int, default=50, help='steps between checkpoints (each also picks the threshold)')
    ap.add_argument('--init', help='continue from this checkpoint (a second training stage)')
    ap.add_argument('--resume', action='store_true',
                    help='pick up an interrupted run where OUT.state (written with every checkpoint) left it')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rnd = random.Random(args.seed)
    tok = Tokenizer.load(args.tokenizer)
    t0 = time.time()
    rows = [json.loads(l) for l in open(args.samples)]
    rnd.shuffle(rows)
    # Hold out 3% of the training packages' samples to pick the gate threshold (the held-out packages are for eval).
    n_val = 240
    val, rows = rows[:n_val], rows[n_val:]
    # Balance: every positive sample, and as many negatives (spans and infile tasks) as the budget needs.
    fim, fim_label = [], []
    for s in rows:
        po = rnd.random() < args.prefix_only_share
        if args.oracle_cc_share and s['label'] and s.get('oracle_cc') and rnd.random() < args.oracle_cc_share:
            s = dict(s, cc=s['oracle_cc'])
        fim.append(fim_sequence(tok, s, prefix_only=po)[:2])
        fim_label.append(bool(s['label']))
    pos = sum(1 for s in rows if s['label'])
    copy = []
    if args.copy_samples:
        for s in (json.loads(l) for l in open(args.copy_samples)):
            if s['oracle_cc'] and rnd.random() < args.oracle_cc_share:
                s = dict(s, cc=s['oracle_cc'], label=1)
            if s['label']:
                # A lesson teaches copying, not gating: its cursor sits where no line task would put it.
                ids, w, gate_pos, _ = fim_sequence(tok, s, prefix_only=rnd.random() < args.prefix_only_share)
                w[gate_pos] = 0.0
                copy.append((ids, w))
        rnd.shuffle(copy)
    drills = copy_curriculum.drills(tok, args.corpus, args.drills, args.seed, kinds=tuple(args.drill_kinds.split(','))) if args.drills else []
    lm = lm_chunks(tok, args.corpus, int(args.steps * args.batch_tokens * args.lm_share * 1.2), 256, args.seed)
    print(f'{len(fim)} FIM samples ({pos} positive), {len(copy)} copy lessons, {len(drills)} drills, {len(lm)} LM chunks, prepared in {time.time() - t0:.0f}s', flush=True)

    model = TinyLlama(dict(CONFIG, vocab=len(tok.tokens)))
    stages = []
    if args.init:
        init = torch.load(args.init, map_location='cpu')
        model.load_state_dict(init['model'])
        stages = list(init.get('stages', [init.get('meta', {})]))
    dev = torch.device(args.device)
    model.to(dev)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    nodecay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.05}, {'params': nodecay, 'weight_decay': 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8)
    warm = max(10, args.steps // 25)
    sched = lambda step: min(1.0, (step + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, step / args.steps))))
    fim_order, lm_order = list(range(len(fim))), list(range(len(lm)))
    rnd.shuffle(fim_order); rnd.shuffle(lm_order)
    pos_order = [i for i in fim_order if fim_label[i]]
    neg_order = [i for i in fim_order if not fim_label[i]]
    pi = ni = 0
    fi = li = ci = di = 0
    pending = None
    seen = 0
    first_step = 0
    elapsed_before = 0.0
    if args.resume and os.path.exists(args.out + '.state'):
        st = torch.load(args.out + '.state', map_location='cpu', weights_only=False)
        model.load_state_dict(st['model']); opt.load_state_dict(st['opt'])
        first_step, seen, pending, elapsed_before = st['step'], st['seen'], st['pending'], st['elapsed']
        # States saved before the drills existed hold five cursors.
        pi, ni, fi, li, ci, di = (tuple(st['cursors']) + (0,))[:6]
        rnd.setstate(st['rnd']); torch.set_rng_state(st['torch_rng'])
        print(f'resuming at step {first_step} after {elapsed_before / 60:.1f} min', flush=True)
    start = time.time() - elapsed_before
    log_loss = []

    def checkpoint(steps):
        save(model, args, steps, start, seen, tok, val, stages)
        st = {'model': model.state_dict(), 'opt': opt.state_dict(), 'step': steps, 'seen': seen, 'pending': pending,
              'elapsed': time.time() - start, 'cursors': (pi, ni, fi, li, ci, di), 'rnd': rnd.getstate(),
              'torch_rng': torch.get_rng_state()}
        torch.save(st, args.out + '.state.tmp')
        os.replace(args.out + '.state.tmp', args.out + '.state')

    for step in range(first_step, args.steps):
        for g in opt.param_groups:
            g['lr'] = args.lr * sched(step)
        # Packed rows of ROW tokens; attention and positions stay within each sample (doc numbers).
        R = args.batch_tokens // ROW
        x = torch.zeros(R, ROW, dtype=torch.long)
        y = torch.zeros(R, ROW, dtype=torch.long)
        w = torch.zeros(R, ROW)
        doc = torch.full((R, ROW), -1, dtype=torch.long)
        for r in range(R):
            used, d = 0, 0
            while used < ROW - 16:
                if pending is not None:
                    item, pending = pending, None
                elif rnd.random() < args.lm_share:
                    item = lm[lm_order[li % len(lm)]]; li += 1
                elif rnd.random() < args.repeat_share:
                    item = copy_curriculum.repeat_drill(rnd, len(tok.tokens))
                elif drills and rnd.random() < args.drill_share:
                    item = drills[di % len(drills)]; di += 1
                elif copy and rnd.random() < args.copy_share:
                    item = copy[ci % len(copy)]; ci += 1
                elif args.positive_share:
                    if rnd.random() < args.positive_share:
                        item = fim[pos_order[pi % len(pos_order)]]; pi += 1
                    else:
                        item = fim[neg_order[ni % len(neg_order)]]; ni += 1
                else:
                    item = fim[fim_order[fi % len(fim)]]; fi += 1
                ids, ws = item
                n = len(ids) - 1
                if n > ROW - used:
                    if used == 0:
                        n = ROW
                    else:
                        pending = item
                        break
                x[r, used:used + n] = torch.tensor(ids[:n]); y[r, used:used + n] = torch.tensor(ids[1:n + 1])
                w[r, used:used + n] = torch.tensor(ws[:n]); doc[r, used:used + n] = d
                used += n; d += 1
            doc[r, used:] = d
        x, y, w, doc = x.to(dev), y.to(dev), w.to(dev), doc.to(dev)
        logits = model(x, doc)
        ce = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), reduction='none')
        loss = (ce * w.view(-1)).sum() / w.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        seen += int((w > 0).sum())
        log_loss.append(loss.item())
        if step % 10 == 0 or step == args.steps - 1:
            el = time.time() - start
            print(f'step {step} loss {np.mean(log_loss[-10:]):.3f} lr {args.lr * sched(step):.2e} tokens {seen} '
                  f'{seen / max(el, 1e-9):.0f} tok/s elapsed {el / 60:.1f} min', flush=True)
        if (step + 1) % args.save_every == 0 or step == args.steps - 1:
            checkpoint(step + 1)
        if args.max_minutes and time.time() - start > args.max_minutes * 60:
            print(f'stopping at step {step + 1}: --max-minutes reached', flush=True)
            checkpoint(step + 1)
            break


@torch.no_grad()
def gate_probs(model, tok, samples):
    """P(<cc>) after <fim_prefix>L<fim_suffix>R<eof> for each sample."""
    model.eval()
    out = []
    dev = next(model.parameters()).device
    for s in samples:
        ids, _, gate_pos, _ = fim_sequence(tok, s, use_cc=False)
        logits = model(torch.tensor([ids[:gate_pos + 1]], device=dev))[0, -1]
        out.append(torch.softmax(logits.float(), -1)[tok.special['<cc>']].item())
    model.train()
    return out


def pick_threshold(probs, labels):
    """Maximises balanced accuracy (Youden's J) on the validation slice of the training packages."""
    best, bt = -1, 0.5
    for t in sorted(set(round(p, 4) for p in probs)):
        tp = sum(1 for p, l in zip(probs, labels) if l and p > t)
        tn = sum(1 for p, l in zip(probs, labels) if not l and p <= t)
        P = sum(labels) or 1
        N = (len(labels) - sum(labels)) or 1
        j = tp / P + tn / N
        if j > best:
            best, bt = j, t
    return bt


def save(model, args, steps, start, seen, tok, val, stages):
    probs = gate_probs(model, tok, val)
    labels = [s['label'] for s in val]
    thr = pick_threshold(probs, labels)
    ck = {'config': model.c, 'model': {k: v.cpu() for k, v in model.state_dict().items()}, 'threshold': thr,
          'meta': {'steps': steps, 'train_minutes': f'{(time.time() - start) / 60:.1f}', 'trained_tokens': seen,
                   'seed': args.seed, 'val_gate_threshold': f'{thr:.4f}', 'lr': args.lr,
                   'lm_share': args.lm_share, 'positive_share': args.positive_share, 'copy_share': args.copy_share,
                   'device': args.device}}
    ck['stages'] = stages + [ck['meta']]
    ck['meta'] = {f'stage{i + 1}_{k}': v for i, st in enumerate(ck['stages']) for k, v in st.items()}
    torch.save(ck, args.out + '.tmp')
    os.replace(args.out + '.tmp', args.out)
    print(f'saved {args.out} at step {steps}; validation gate threshold {thr:.4f}', flush=True)


if __name__ == '__main__':
    main()
