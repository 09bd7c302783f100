#!/usr/bin/env python3
"""Writes the model (a training checkpoint, or random weights with --random) and tokenizer as a llama GGUF.

  export_gguf.py --tokenizer work/tokenizer.json --ckpt work/model.pt --out ../../test/fixtures/models/repogate-tiny.gguf
"""
import argparse
import numpy as np
import torch
import gguf
from gguf import U32, I32, F32, BOOL, STR, ARR
from model import CONFIG, TinyLlama
from tok import Tokenizer, SPECIALS

GATE_THRESHOLD = 0.2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tokenizer', required=True)
    ap.add_argument('--ckpt')
    ap.add_argument('--random', action='store_true')
    ap.add_argument('--threshold', type=float, default=GATE_THRESHOLD)
    ap.add_argument('--out', required=True)
    args = ap.parse_args()
    tok = Tokenizer.load(args.tokenizer)
    if args.random:
        torch.manual_seed(0)
        c = dict(CONFIG, vocab=len(tok.tokens))
        model = TinyLlama(c)
        meta = {'note': 'random weights'}
    else:
        ck = torch.load(args.ckpt, map_location='cpu')
        model = TinyLlama(ck['config'])
        model.load_state_dict(ck['model'])
        meta = ck.get('meta', {})
        threshold = ck.get('threshold')
        if threshold is not None and args.threshold == GATE_THRESHOLD:
            args.threshold = threshold
    c = model.c
    assert c['vocab'] == len(tok.tokens)
    sid = tok.special
    kvs = [
        ('general.architecture', STR, 'llama'),
        ('general.name', STR, 'repogate-tiny'),
        ('general.description', STR, 'Tiny Repoformer-style self-selective code model for RepoGate tests and demos'),
        ('general.license', STR, 'MIT'),
        ('general.file_type', U32, 1),
        ('llama.context_length', U32, c['ctx']),
        ('llama.embedding_length', U32, c['dim']),
        ('llama.block_count', U32, c['layers']),
        ('llama.feed_forward_length', U32, c['ffn']),
        ('llama.attention.head_count', U32, c['heads']),
        ('llama.attention.head_count_kv', U32, c['heads']),
        ('llama.attention.layer_norm_rms_epsilon', F32, c['eps']),
        ('llama.rope.dimension_count', U32, c['dim'] // c['heads']),
        ('llama.rope.freq_base', F32, c['rope_base']),
        ('llama.vocab_size', U32, c['vocab']),
        ('tokenizer.ggml.model', STR, 'gpt2'),
        ('tokenizer.ggml.pre', STR, 'command-r'),
        ('tokenizer.ggml.tokens', ARR, (STR, tok.tokens)),
        ('tokenizer.ggml.token_type', ARR, (I32, [3 if t in sid else 1 for t in tok.tokens])),
        ('tokenizer.ggml.merges', ARR, (STR, [a + ' ' + b for a, b in tok.merges])),
        ('tokenizer.ggml.bos_token_id', U32, sid['<|endoftext|>']),
        ('tokenizer.ggml.eos_token_id', U32, sid['<|endoftext|>']),
        ('tokenizer.ggml.eot_token_id', U32, sid['<|endoftext|>']),
        ('tokenizer.ggml.padding_token_id', U32, sid['<|endoftext|>']),
        ('tokenizer.ggml.add_bos_token', BOOL, False),
        ('tokenizer.ggml.add_eos_token', BOOL, False),
        ('tokenizer.ggml.fim_pre_token_id', U32, sid['<fim_prefix>']),
        ('tokenizer.ggml.fim_suf_token_id', U32, sid['<fim_suffix>']),
        ('tokenizer.ggml.fim_mid_token_id', U32, sid['<fim_middle>']),
        ('repogate.format', STR, 'repoformer'),
        ('repogate.prompt_layout', STR, '<fim_prefix>{left}<fim_suffix>{right}<eof>[<cc>{cc}]<fim_middle>{middle}<|endoftext|>'),
        ('repogate.gate_token', STR, '<cc>'),
        ('repogate.gate_token_id', U32, sid['<cc>']),
        ('repogate.eof_token', STR, '<eof>'),
        ('repogate.eof_token_id', U32, sid['<eof>']),
        ('repogate.gate_threshold', F32, float(args.threshold)),
        ('repogate.context_renderer', STR, 'comment-blocks'),
    ]
    for k, v in sorted(meta.items()):
        kvs.append(('repogate.train.' + k, STR, str(v)))
    sd = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
    f16 = lambda a: a.astype(np.float16)
    tensors = [('token_embd.weight', f16(sd['embed.weight']))]
    for i in range(c['layers']):
        p = f'blocks.{i}.'
        tensors += [
            (f'blk.{i}.attn_norm.weight', sd[p + 'attn_norm.weight']),
            (f'blk.{i}.attn_q.weight', f16(sd[p + 'wq.weight'])),
            (f'blk.{i}.attn_k.weight', f16(sd[p + 'wk.weight'])),
            (f'blk.{i}.attn_v.weight', f16(sd[p + 'wv.weight'])),
            (f'blk.{i}.attn_output.weight', f16(sd[p + 'wo.weight'])),
            (f'blk.{i}.ffn_norm.weight', sd[p + 'ffn_norm.weight']),
            (f'blk.{i}.ffn_gate.weight', f16(sd[p + 'w_gate.weight'])),
            (f'blk.{i}.ffn_up.weight', f16(sd[p + 'w_up.weight'])),
            (f'blk.{i}.ffn_down.weight', f16(sd[p + 'w_down.weight'])),
        ]
    tensors.append(('output_norm.weight', sd['norm.weight']))
    gguf.write(args.out, kvs, tensors)
    n = sum(v.size for k, v in sd.items())
    print(f'wrote {args.out}: {n} parameters, {len(tok.tokens)} tokens')


if __name__ == '__main__':
    main()
