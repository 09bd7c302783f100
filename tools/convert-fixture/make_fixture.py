#!/usr/bin/python3
"""Makes test/fixtures/repoformer-tiny: a tiny GPTBigCode (Repoformer-shaped) checkpoint with random weights, saved
the way Hugging Face saves one, plus reference outputs of a plain-torch forward pass.

  /usr/bin/python3 tools/convert-fixture/make_fixture.py \
      --vocab-from test/fixtures/models/repogate-tiny.gguf --out test/fixtures/repoformer-tiny

Needs Debian's python3-torch (1.13) and numpy; no transformers. The vocabulary is the project's small byte-level BPE
(read from the demo model's GGUF) laid out like StarCoder's: its special tokens at ids 0-18, then the BPE tokens,
and, as Repoformer's training code adds them, two plain added tokens after the base vocabulary named <cfc_info> and
</cfc_info> (added_tokens.json), which the converter must name <cc> and <eof>.

Files: config.json, tokenizer.json, added_tokens.json; pytorch_model.bin (fp32, torch zip format, lm_head.weight
tied to transformer.wte.weight as in a state dict saved from the live model); model.safetensors (bf16, no lm_head);
pytorch_model-0000{1,2}-of-00002.bin + pytorch_model.bin.index.json (fp16, sharded); reference.json (outputs: the
plain fp32 forward on each file's weights; ggmlOutputs: the same computed as llama.cpp's CPU backend computes the F16
and Q8_0 GGUFs converted from each, see ggml_forward.py); malicious/*.bin, pickles that would run a command if Python
unpickled them.
"""
import argparse
import json
import math
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tiny-model'))
from tok import bytes_to_unicode  # noqa: E402  (GPT-2's byte -> character table)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggml_forward  # noqa: E402  (the same forward pass with llama.cpp's CPU roundings)

STARCODER_SPECIALS = [
    '<|endoftext|>', '<fim_prefix>', '<fim_middle>', '<fim_suffix>', '<fim_pad>', '<filename>', '<gh_stars>',
    '<issue_start>', '<issue_comment>', '<issue_closed>', '<jupyter_start>', '<jupyter_text>', '<jupyter_code>',
    '<jupyter_output>', '<empty_output>', '<commit_before>', '<commit_msg>', '<commit_after>', '<reponame>',
]
# The demo tokenizer's own specials; every other token of it becomes a base BPE token here.
DEMO_SPECIALS = {'<|endoftext|>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<eof>', '<cc>'}
ADDED = ['<cfc_info>', '</cfc_info>']

N_EMBD = 64          # a multiple of 32, so that every matrix row fills whole Q8_0 blocks
N_HEAD = 4
N_LAYER = 2
N_POSITIONS = 256
EPS = 1e-5
WEIGHT_STD = 0.3     # larger than a trained model's init: peaked distributions, so greedy tokens are well separated
ATTN_STD = 0.1       # q.k scores of about unit size: softer attention, not overly sensitive to rounding
TARGET_P_CC = 0.3    # P(<cc>) after the gate prompt, away from 0 so that comparing it means something
GREEDY_STEPS = 8
TOP_K = 64           # log-probabilities stored per prompt


def read_gguf_vocab(path):
    """tokenizer.ggml.tokens and .merges from a GGUF v3 file (only string arrays and scalars are needed)."""
    with open(path, 'rb') as f:
        data = f.read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from('<' + fmt, data, pos)
        pos += struct.calcsize('<' + fmt)
        return v[0]

    def string():
        nonlocal pos
        n = take('Q')
        s = data[pos:pos + n].decode('utf-8')
        pos += n
        return s

    sizes = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et = take('I')
            return [value(et) for _ in range(take('Q'))]
        return take(sizes[t])

    assert data[:4] == b'GGUF'
    pos = 8
    take('Q')
    kvs = {}
    for _ in range(take('Q')):
        k = string()
        kvs[k] = value(take('I'))
    return kvs['tokenizer.ggml.tokens'], kvs['tokenizer.ggml.merges']


def tokenizer_json(vocab, merges):
    added = [dict(id=i, content=t, single_word=False, lstrip=False, rstrip=False, normalized=False, special=True)
             for i, t in enumerate(STARCODER_SPECIALS)]
    return {
        'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': added, 'normalizer': None,
        'pre_tokenizer': {'type': 'Sequence', 'pretokenizers': [
            {'type': 'Digits', 'individual_digits': True},
            {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True}]},
        'post_processor': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': False, 'use_regex': True},
        'decoder': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': None,
                  'end_of_word_suffix': None, 'fuse_unk': False, 'vocab': vocab, 'merges': merges},
    }


def make_state_dict(vocab_size, seed):
    g = torch.Generator().manual_seed(seed)
    kv = N_EMBD // N_HEAD
    n_inner = 4 * N_EMBD

    def w(*shape, std=WEIGHT_STD):
        return torch.randn(*shape, generator=g) * std

    sd = {'transformer.wte.weight': w(vocab_size, N_EMBD), 'transformer.wpe.weight': w(N_POSITIONS, N_EMBD)}
    for i in range(N_LAYER):
        p = f'transformer.h.{i}.'
        sd[p + 'ln_1.weight'] = 1 + w(N_EMBD, std=0.1)
        sd[p + 'ln_1.bias'] = w(N_EMBD, std=0.1)
        sd[p + 'attn.c_attn.weight'] = w(N_EMBD + 2 * kv, N_EMBD, std=ATTN_STD)
        sd[p + 'attn.c_attn.bias'] = w(N_EMBD + 2 * kv, std=0.1)
        sd[p + 'attn.c_proj.weight'] = w(N_EMBD, N_EMBD, std=WEIGHT_STD / 2)
        sd[p + 'attn.c_proj.bias'] = w(N_EMBD, std=0.1)
        sd[p + 'ln_2.weight'] = 1 + w(N_EMBD, std=0.1)
        sd[p + 'ln_2.bias'] = w(N_EMBD, std=0.1)
        sd[p + 'mlp.c_fc.weight'] = w(n_inner, N_EMBD)
        sd[p + 'mlp.c_fc.bias'] = w(n_inner, std=0.1)
        sd[p + 'mlp.c_proj.weight'] = w(N_EMBD, n_inner, std=WEIGHT_STD / 2)
        sd[p + 'mlp.c_proj.bias'] = w(N_EMBD, std=0.1)
    sd['transformer.ln_f.weight'] = 1 + w(N_EMBD, std=0.1)
    sd['transformer.ln_f.bias'] = w(N_EMBD, std=0.1)
    return sd


def forward(sd, ids):
    """Logits for every position (the tied lm_head on hidden())."""
    return hidden(sd, ids) @ sd['transformer.wte.weight'].T


def hidden(sd, ids):
    """Final hidden states for every position: GPTBigCode (transformers' modeling_gpt_bigcode) with multi_query=True, learned
    positions, pre-LayerNorm blocks with biases, gelu_pytorch_tanh MLP."""
    x = sd['transformer.wte.weight'][ids] + sd['transformer.wpe.weight'][torch.arange(len(ids))]
    head_dim = N_EMBD // N_HEAD
    t = len(ids)
    mask = torch.ones(t, t, dtype=torch.bool).tril()
    ln = torch.nn.functional.layer_norm
    for i in range(N_LAYER):
        p = f'transformer.h.{i}.'
        h = ln(x, (N_EMBD,), sd[p + 'ln_1.weight'], sd[p + 'ln_1.bias'], EPS)
        qkv = h @ sd[p + 'attn.c_attn.weight'].T + sd[p + 'attn.c_attn.bias']
        q, k, v = qkv.split((N_EMBD, head_dim, head_dim), dim=-1)
        q = q.view(t, N_HEAD, head_dim).transpose(0, 1)          # heads, t, d
        scores = (q @ k.T) / math.sqrt(head_dim)                  # one key/value head shared by all query heads
        scores = scores.masked_fill(~mask, float('-inf')).softmax(-1)
        a = (scores @ v).transpose(0, 1).reshape(t, N_EMBD)
        x = x + a @ sd[p + 'attn.c_proj.weight'].T + sd[p + 'attn.c_proj.bias']
        h = ln(x, (N_EMBD,), sd[p + 'ln_2.weight'], sd[p + 'ln_2.bias'], EPS)
        h = torch.nn.functional.gelu(h @ sd[p + 'mlp.c_fc.weight'].T + sd[p + 'mlp.c_fc.bias'], approximate='tanh')
        x = x + h @ sd[p + 'mlp.c_proj.weight'].T + sd[p + 'mlp.c_proj.bias']
    return ln(x, (N_EMBD,), sd['transformer.ln_f.weight'], sd['transformer.ln_f.bias'], EPS)


def set_gate_row(sd, gate_ids, cc_id):
    """Scales the <cc> row of wte along the gate prompt's final hidden state so that P(<cc>) there is TARGET_P_CC."""
    w = sd['transformer.wte.weight']
    w[cc_id] = 0
    h = hidden(sd, gate_ids)[-1]
    others = forward(sd, gate_ids)[-1]
    others[cc_id] = float('-inf')
    lse = torch.logsumexp(others, 0)
    target = lse + math.log(TARGET_P_CC / (1 - TARGET_P_CC))
    w[cc_id] = h * (target / h.dot(h))


def reference(sd, prompts, cc_id, logits=forward):
    """P(<cc>), the top log-probabilities and greedy tokens after each prompt, logits(sd, ids) giving every
    position's logits."""
    out = []
    for name, ids in prompts:
        logp = logits(sd, ids)[-1].log_softmax(-1)
        top = logp.topk(TOP_K)
        seq = list(ids)
        greedy = []
        margins = []
        for _ in range(GREEDY_STEPS):
            two = logits(sd, seq)[-1].topk(2)
            greedy.append(int(two.indices[0]))
            margins.append(round(float(two.values[0] - two.values[1]), 4))
            seq.append(greedy[-1])
        out.append({'name': name, 'pCc': float(logp[cc_id].exp()),
                    'top': [[int(i), round(float(v), 5)] for v, i in zip(top.values, top.indices)],
                    'greedy': greedy, 'greedyMargins': margins})
    return out


def ggml_reference(sd, prompts, cc_id, weight_type):
    """reference() of the GGUF that `repogate convert --type weight_type` makes from sd, as llama.cpp computes it."""
    stored = ggml_forward.stored(sd, weight_type)
    return reference(stored, prompts, cc_id,
                     lambda w, ids: ggml_forward.logits(w, ids, N_HEAD, EPS))


def rounded(sd, dtype):
    return {k: v.to(dtype).float() for k, v in sd.items()}


def write_safetensors(path, sd, dtype):
    names = {torch.float32: 'F32', torch.float16: 'F16', torch.bfloat16: 'BF16'}
    header, blobs, offset = {'__metadata__': {'format': 'pt'}}, [], 0
    for k, v in sd.items():
        # bf16 has no numpy type: write its raw bits through int16.
        b = v.to(dtype).contiguous().view(torch.int16 if dtype != torch.float32 else torch.int32).numpy().tobytes()
        header[k] = {'dtype': names[dtype], 'shape': list(v.shape), 'data_offsets': [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--vocab-from', required=True, help='a GGUF whose byte-level BPE vocabulary and merges to use')
    ap.add_argument('--out', required=True)
    # Chosen among seeds 0-59 for the widest smallest greedy margin (0.113 logits) over all prompts and dtypes.
    ap.add_argument('--seed', type=int, default=12)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)

    tokens, merges = read_gguf_vocab(args.vocab_from)
    base = STARCODER_SPECIALS + [t for t in tokens if t not in DEMO_SPECIALS]
    vocab = {t: i for i, t in enumerate(base)}
    cc_id, eof_id = len(base), len(base) + 1
    n_vocab = len(base) + len(ADDED)
    with open(os.path.join(args.out, 'tokenizer.json'), 'w') as f:
        json.dump(tokenizer_json(vocab, merges), f, ensure_ascii=False, separators=(',', ':'))
    with open(os.path.join(args.out, 'added_tokens.json'), 'w') as f:
        json.dump({ADDED[0]: cc_id, ADDED[1]: eof_id}, f)
    config = {
        'architectures': ['GPTBigCodeForCausalLM'], 'model_type': 'gpt_bigcode', 'activation_function': 'gelu_pytorch_tanh',
        'attention_softmax_in_fp32': True, 'scale_attention_softmax_in_fp32': True, 'scale_attn_weights': True,
        'multi_query': True, 'n_embd': N_EMBD, 'n_head': N_HEAD, 'n_layer': N_LAYER, 'n_inner': 4 * N_EMBD,
        'n_positions': N_POSITIONS, 'layer_norm_epsilon': EPS, 'vocab_size': n_vocab, 'bos_token_id': 0,
        'eos_token_id': 0, 'initializer_range': 0.02, 'torch_dtype': 'float32', 'use_cache': True,
    }
    with open(os.path.join(args.out, 'config.json'), 'w') as f:
        json.dump(config, f, indent=2)

    def ids_of(text):
        """Prompt ids: each piece of text as the vocabulary's single-character tokens (greedy longest match keeps
        prompts short without a BPE here; the converter is checked on the ids, the tokenizer elsewhere)."""
        byte_map = bytes_to_unicode()
        s = ''.join(byte_map[b] for b in text.encode('utf-8'))
        out, i = [], 0
        while i < len(s):
            j = len(s)
            while j > i + 1 and s[i:j] not in vocab:
                j -= 1
            out.append(vocab[s[i:j]])
            i = j
        return out

    sp = {t: i for i, t in enumerate(STARCODER_SPECIALS)}
    left, right = 'def area(r):\n    return ', '\n\nprint(area(2))\n'
    gate = [sp['<fim_prefix>']] + ids_of(left) + [sp['<fim_suffix>']] + ids_of(right) + [eof_id]
    prompts = [
        ('gate', gate),
        ('generate', gate + [sp['<fim_middle>']]),
        ('with-cc', gate + [cc_id] + ids_of('\n\n# other.py\n# PI = 3.14\n') + [sp['<fim_middle>']]),
        ('plain', ids_of('import os\nfor name in os.listdir("."):\n    print(')),
    ]

    sd = make_state_dict(n_vocab, args.seed)
    set_gate_row(sd, gate, cc_id)
    sources = {'f32': sd, 'f16': rounded(sd, torch.float16), 'bf16': rounded(sd, torch.bfloat16)}
    refs = {k: reference(v, prompts, cc_id) for k, v in sources.items()}
    ggml_refs = {t: {k: ggml_reference(v, prompts, cc_id, t) for k, v in sources.items()} for t in ('f16', 'q8_0')}

    full = dict(sd)
    full['lm_head.weight'] = sd['transformer.wte.weight']  # shared storage, as a live model's state dict has it
    torch.save(full, os.path.join(args.out, 'pytorch_model.bin'))
    write_safetensors(os.path.join(args.out, 'model.safetensors'), sd, torch.bfloat16)
    names = list(sd)
    half = {k: v.half() for k, v in sd.items()}
    shards = [names[:len(names) // 2], names[len(names) // 2:]]
    weight_map, total = {}, 0
    for n, part in enumerate(shards, 1):
        fname = f'pytorch_model-{n:05d}-of-{len(shards):05d}.bin'
        torch.save({k: half[k] for k in part}, os.path.join(args.out, fname))
        for k in part:
            weight_map[k] = fname
            total += half[k].numel() * 2
    with open(os.path.join(args.out, 'pytorch_model.bin.index.json'), 'w') as f:
        json.dump({'metadata': {'total_size': total}, 'weight_map': weight_map}, f, indent=2)

    write_malicious(os.path.join(args.out, 'malicious'))

    with open(os.path.join(args.out, 'reference.json'), 'w') as f:
        json.dump({
            'about': 'Reference outputs of tools/convert-fixture/make_fixture.py: a plain-torch GPTBigCode forward '
                     'pass on the weights of each source file (f32: pytorch_model.bin; bf16: model.safetensors; '
                     'f16: the sharded .bin), last position of each prompt.',
            'ccId': cc_id, 'eofId': eof_id, 'vocabSize': n_vocab, 'targetPCc': TARGET_P_CC,
            'prompts': [{'name': n, 'ids': ids} for n, ids in prompts], 'outputs': refs,
            'ggmlAbout': 'The same, computed as llama.cpp\'s CPU backend computes the converted GGUF of each output '
                         'type (tools/convert-fixture/ggml_forward.py): weights stored as F16 or Q8_0, activations '
                         'converted for each matrix product, f16 KV cache and flash attention, f16 GELU table.',
            'ggmlOutputs': ggml_refs,
        }, f, separators=(',', ':'))
    for k, v in refs.items():
        print(k, [(r['name'], round(r['pCc'], 4), min(r['greedyMargins'])) for r in v])
    for t, by_source in ggml_refs.items():
        for k, v in by_source.items():
            print(f'{k} as {t}', [(r['name'], round(r['pCc'], 4), min(r['greedyMargins'])) for r in v])


MARKER = '/tmp/repogate-convert-pwned'


class Reduce:
    """Pickles as a call of fn(arg): what a malicious checkpoint does to run code when torch.load reads it."""

    def __init__(self, fn, arg):
        self.fn, self.arg = fn, arg

    def __reduce__(self):
        return self.fn, (self.arg,)


def write_malicious(out):
    """Two checkpoints that run a command when unpickled by Python (touching MARKER): never torch.load them."""
    os.makedirs(out, exist_ok=True)
    cases = {'os-system.bin': Reduce(os.system, f'touch {MARKER}'),
             'builtins-eval.bin': Reduce(eval, f"__import__('os').system('touch {MARKER}')")}
    for name, payload in cases.items():
        torch.save({'transformer.wte.weight': payload}, os.path.join(out, name))


if __name__ == '__main__':
    main()
