"""llama_run.run's contract (probabilities at positions, greedy generation) on a torch checkpoint, batched, on any
device: for trying recipes on a GPU, where node-llama-cpp is not installed. The shipped numbers come from
llama_run (the GGUF through llama.cpp)."""
import torch
from model import TinyLlama


def load(ckpt, device):
    ck = torch.load(ckpt, map_location='cpu')
    model = TinyLlama(ck['config'])
    model.load_state_dict({k: v.float() for k, v in ck['model'].items()})
    return model.to(device).eval()


@torch.no_grad()
def next_probs(model, seqs, device):
    """Next-token probabilities after every position of each sequence (right-padded; padding is its own doc)."""
    T = max(len(s) for s in seqs)
    x = torch.zeros(len(seqs), T, dtype=torch.long)
    doc = torch.ones(len(seqs), T, dtype=torch.long)
    for r, s in enumerate(seqs):
        x[r, :len(s)] = torch.tensor(s)
        doc[r, :len(s)] = 0
    return model(x.to(device), doc.to(device)).float().softmax(-1)


def run(ckpt, items, watch=(), device='cpu', batch=32):
    model = load(ckpt, device)
    results = [None] * len(items)
    order = sorted(range(len(items)), key=lambda i: len(items[i]['ids']))
    for b in range(0, len(order), batch):
        chunk = order[b:b + batch]
        seqs = [list(items[i]['ids']) for i in chunk]
        probs = next_probs(model, seqs, device)
        for r, i in enumerate(chunk):
            item = items[i]
            results[i] = {'positions': [{'i': p, 'watch': {str(t): probs[r, p, t].item() for t in watch}}
                                        for p in item.get('positions', [])]}
        gen = [r for r, i in enumerate(chunk) if items[i].get('generate')]
        out = {r: [] for r in gen}
        live = gen
        row = {r: r for r in gen}  # each live sequence's row in probs: the chunk's pass gives the first token
        while live:
            still = []
            for r in live:
                item = items[chunk[r]]
                nxt = int(probs[row[r], len(seqs[r]) - 1].argmax())
                if nxt in item.get('stop', []):
                    continue
                out[r].append(nxt)
                seqs[r].append(nxt)
                if len(out[r]) < item['generate']:
                    still.append(r)
            live = still
            if live:
                probs = next_probs(model, [seqs[r] for r in live], device)
                row = {r: k for k, r in enumerate(live)}
        for r in gen:
            results[chunk[r]]['generated'] = out[r]
    return results
