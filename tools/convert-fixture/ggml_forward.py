"""The GPTBigCode forward pass as llama.cpp's CPU backend computes it on a GGUF written by `repogate convert`
(starcoder graph, node-llama-cpp 3.21.1's llama.cpp): the same model as make_fixture.hidden(), with every rounding
that ggml applies and a plain fp32 forward does not.

- Weights: every 2-D tensor but the position embedding is stored as the output type (F16, or Q8_0 quantized as
  ggml's quantize_row_q8_0_ref: blocks of 32 along the input dimension, d = amax/127 stored as f16,
  q = roundf(x/d), halves away from zero); 1-D tensors and the position embedding stay F32. The output matrix is
  the token embedding (tied), read with get_rows (dequantized exactly) for the input.
- Matrix products: the CPU backend first converts the activations to the weight type's vec_dot_type: f16 for F16
  weights; q8_0 for Q8_0 weights, with the x86 quantize_row_q8_0 (d = amax/127 as f16, but q = x*(127/amax)
  rounded half to even). Both go to llamafile's tinyBLAS kernels, whose lane-wise fma accumulation and lane sum
  are followed too: on this fixture's large random weights one value rounded the other way moves P(<cc>) by up to
  3e-3, so summation order matters.
- LayerNorm (ggml_norm): sums in float64, the rest in float32, scaled by 1/sqrt(variance + eps); expf (glibc) and
  the attention's final 1/S as ggml computes them.
- Attention: K and V are stored in an f16 cache; flash attention (node-llama-cpp's default "auto" turns it on for
  the CPU) with fewer than 64 query rows runs the one-chunk kernel: Q converted to f16, scores (q.k)*scale in f32,
  online softmax over the keys in order with the V accumulator kept in f16 (rescaled on each new maximum).
- GELU: a table over f16 inputs holding f16 outputs of the tanh approximation (GGML_GELU_FP16); x <= -10 gives 0
  and x >= 10 gives x.
"""
import math

import torch

Q8_0_BLOCK = 32
Q8_0_LANES = 8            # int32 lanes of tinyBLAS_Q0_AVX's __m256 accumulators: 4 of a block's 32 products each
F16_LANES = 16            # float lanes of tinyBLAS's F16 kernel in the AVX512 build this machine runs (AVX2: 8)
GELU_TABLE_LIMIT = 10.0   # ggml_vec_gelu_f32 bypasses its table outside (-10, 10)
SQRT_2_OVER_PI = 0.79788456080286535587989211986876
GELU_COEF_A = 0.044715


def f16(x):
    return x.to(torch.float16).to(torch.float32)


class Q8_0:
    """A matrix (rows x input dim) in Q8_0 blocks: integer values q and one f16 scale d per block of 32."""

    def __init__(self, q, d):
        self.q, self.d = q, d

    def dequantized(self):
        return (self.d.unsqueeze(-1).double() * self.q.view(*self.d.shape, Q8_0_BLOCK)).float().view(self.q.shape)


def q8_0_weights(w):
    """w through quantize_row_q8_0_ref, as the converter writes it: d = amax/127, q = roundf(x * (1/d))."""
    blocks = w.reshape(w.shape[0], -1, Q8_0_BLOCK)
    d = blocks.abs().amax(-1, keepdim=True) / 127
    inv = torch.where(d != 0, 1 / d, torch.zeros_like(d))
    v = (blocks * inv).double()
    return Q8_0((v.sign() * (v.abs() + 0.5).floor()).view(w.shape), f16(d.squeeze(-1)))


def q8_0_activations(x):
    """x as the x86 quantize_row_q8_0 converts it: d = amax/127 as f16, q = round-half-even(x * (127/amax))."""
    blocks = x.reshape(x.shape[0], -1, Q8_0_BLOCK)
    amax = blocks.abs().amax(-1, keepdim=True)
    mul = torch.where(amax != 0, 127 / amax, torch.zeros_like(amax))
    return Q8_0(torch.round(blocks * mul).double().view(x.shape), f16((amax / 127).squeeze(-1)))


def stored(sd, weight_type):
    """The tensors as the GGUF holds them: F32, f16-rounded F32, or Q8_0."""
    def one(name, t):
        if t.dim() == 1 or name == 'transformer.wpe.weight':
            return t
        return q8_0_weights(t) if weight_type == 'q8_0' else f16(t)
    return {k: one(k, v) for k, v in sd.items()}


def rows(w, ids):
    """get_rows: whole rows, dequantized exactly."""
    return (w.dequantized() if isinstance(w, Q8_0) else w)[ids]


def lane_sum(acc):
    """The lanes of a SIMD accumulator (last axis) summed in the tree order of hsum/_mm512_reduce_add_ps: the upper
    half added to the lower half until one lane is left."""
    while acc.shape[-1] > 1:
        half = acc.shape[-1] // 2
        acc = acc[..., half:] + acc[..., :half]
    return acc[..., 0]


def matmul(x, w):
    """x @ w.T as ggml_mul_mat on the CPU, which hands both types to llamafile's tinyBLAS. F16 weights: x rounded to
    f16, then F16_LANES float32 lanes, lane l accumulating the products of columns l, l+F16_LANES, ... by fma.
    Q8_0 weights: x quantized to q8_0 too, then tinyBLAS_Q0_AVX: per block, eight int32 lanes of four products
    each, each lane accumulated over the blocks as fma(d_w*d_x, lane, acc). Then the lanes are summed."""
    if not isinstance(w, Q8_0):
        xs, n, o = f16(x).double(), x.shape[0], w.shape[0]
        terms = xs.view(n, 1, -1, F16_LANES) * w.double().view(1, o, -1, F16_LANES)   # exact: f16 x f16
        acc = torch.zeros(n, o, F16_LANES)
        for step in range(terms.shape[2]):
            acc = (acc.double() + terms[:, :, step]).float()                          # one rounding, as an fma
        return lane_sum(acc)
    a = q8_0_activations(x)
    n, o = a.q.shape[0], w.q.shape[0]
    lanes = torch.einsum('nblj,oblj->nobl', a.q.view(n, -1, Q8_0_LANES, Q8_0_BLOCK // Q8_0_LANES),
                         w.q.view(o, -1, Q8_0_LANES, Q8_0_BLOCK // Q8_0_LANES))
    acc = torch.zeros(n, o, Q8_0_LANES)
    for b in range(lanes.shape[2]):
        dd = (a.d[:, b].unsqueeze(1) * w.d[:, b].unsqueeze(0)).unsqueeze(-1)    # exact in float32
        acc = (acc.double() + dd.double() * lanes[:, :, b]).float()
    return lane_sum(acc)


def gelu(x):
    h = f16(x)   # float32 arithmetic throughout, as ggml_gelu_f32 fills the table
    y = f16(0.5 * h * (1 + torch.tanh(SQRT_2_OVER_PI * h * (1 + GELU_COEF_A * h * h))))
    return torch.where(x <= -GELU_TABLE_LIMIT, torch.zeros_like(x), torch.where(x >= GELU_TABLE_LIMIT, x, y))


def exp(x):
    """expf as glibc computes it (correctly rounded in practice), not torch's vectorized float32 approximation."""
    return torch.exp(x.double()).float()


def attention(q, k, v, scale):
    """Causal flash attention of q (heads x t x d) over one shared f16 key/value head, as ggml's one-chunk kernel."""
    heads, t, dim = q.shape
    qh, kh, vh = f16(q).double(), f16(k).double(), f16(v)
    acc = torch.zeros(heads, t, dim)               # the f16 V accumulator
    m = torch.full((heads, t, 1), -math.inf)
    s_sum = torch.zeros(heads, t, 1)
    positions = torch.arange(t).view(1, t, 1)
    for key in range(t):
        s = ((qh @ kh[key]).float() * scale).unsqueeze(-1)   # heads x t x 1
        live = positions >= key                                  # masked keys are skipped, not weighted by 0
        new_max = live & (s > m)
        ms = torch.where(new_max, exp(m - s), torch.ones_like(s))
        vs = torch.where(new_max, torch.ones_like(s), exp(s - m))
        scaled = torch.where(new_max, f16(acc * ms), acc)
        # y + x*v as one fused multiply-add (rounded once to f32, as the compiler contracts it), then to f16
        acc = torch.where(live, f16((scaled.double() + vh[key].double() * vs.double()).float()), acc)
        s_sum = torch.where(live, s_sum * ms + vs, s_sum)
        m = torch.where(new_max, s, m)
    return acc * (1 / s_sum)   # ggml scales by the reciprocal of the sum


def layer_norm(x, weight, bias, eps):
    """ggml_norm, then the weight and bias: sums in float64, everything else in float32 as ggml orders it."""
    n = x.shape[-1]
    mean = (x.double().sum(-1, keepdim=True).float() / n)
    y = x - mean
    variance = ((y * y).double().sum(-1, keepdim=True) / n).float()
    return y * (1 / torch.sqrt(variance + eps)) * weight + bias


def logits(sd, ids, n_head, eps):
    """Every position's logits from the stored tensors sd (see stored())."""
    n_embd = sd['transformer.wpe.weight'].shape[1]
    head_dim = n_embd // n_head
    t = len(ids)
    x = rows(sd['transformer.wte.weight'], ids) + sd['transformer.wpe.weight'][torch.arange(t)]
    n_layer = len({k.split('.')[2] for k in sd if k.startswith('transformer.h.')})
    for i in range(n_layer):
        p = f'transformer.h.{i}.'
        h = layer_norm(x, sd[p + 'ln_1.weight'], sd[p + 'ln_1.bias'], eps)
        qkv = matmul(h, sd[p + 'attn.c_attn.weight']) + sd[p + 'attn.c_attn.bias']
        q, k, v = qkv.split((n_embd, head_dim, head_dim), dim=-1)
        a = attention(q.view(t, n_head, head_dim).transpose(0, 1), k, v, 1 / math.sqrt(head_dim))
        a = a.transpose(0, 1).reshape(t, n_embd)
        x = x + matmul(a, sd[p + 'attn.c_proj.weight']) + sd[p + 'attn.c_proj.bias']
        h = layer_norm(x, sd[p + 'ln_2.weight'], sd[p + 'ln_2.bias'], eps)
        h = gelu(matmul(h, sd[p + 'mlp.c_fc.weight']) + sd[p + 'mlp.c_fc.bias'])
        x = x + matmul(h, sd[p + 'mlp.c_proj.weight']) + sd[p + 'mlp.c_proj.bias']
    h = layer_norm(x, sd['transformer.ln_f.weight'], sd['transformer.ln_f.bias'], eps)
    return matmul(h, sd['transformer.wte.weight'])
