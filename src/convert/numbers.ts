/**
 * Number formats of the conversion: bf16/f16 → f32 on reading, f32 → f16 and Q8_0 on writing, with ggml's
 * rounding (round to nearest even for f16; Q8_0 as quantize_row_q8_0_ref: d = amax / 127 as an f16,
 * q = roundf(x / d) computed in float32).
 */
export type GgmlOutType = 'F32' | 'F16' | 'Q8_0';

/** ggml_type ids (ggml.h). */
export const GGML_TYPE_ID: Readonly<Record<GgmlOutType, number>> = { F32: 0, F16: 1, Q8_0: 8 };
export const Q8_0_BLOCK = 32;
/** ggml's Q8_0 block: an f16 scale and Q8_0_BLOCK int8 quants. */
export const Q8_0_BLOCK_BYTES = 2 + Q8_0_BLOCK;

export function outputBytes(type: GgmlOutType, elements: number): number {
  if (type === 'F32') return elements * 4;
  if (type === 'F16') return elements * 2;
  return (elements / Q8_0_BLOCK) * Q8_0_BLOCK_BYTES;
}

const scratch = new Float32Array(1);
const scratchBits = new Uint32Array(scratch.buffer);

/** IEEE half bits of a float32's bits, rounded to nearest even; overflow becomes infinity. */
function halfFromFloatBits(u: number): number {
  const sign = (u >>> 16) & 0x8000;
  const exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++; // a carry into the exponent is still right
  return sign | half;
}

export function f32ToF16(x: number): number {
  scratch[0] = x;
  return halfFromFloatBits(scratchBits[0]);
}

let halfTable: Float32Array | undefined;

/** All 65,536 half values as float32 (256 KiB), built on first use. */
function halves(): Float32Array {
  if (halfTable) return halfTable;
  halfTable = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exp = (h >>> 10) & 0x1f;
    const mant = h & 0x3ff;
    halfTable[h] =
      exp === 0
        ? sign * mant * 2 ** -24
        : exp === 31
          ? mant
            ? NaN
            : sign * Infinity
          : sign * (1 + mant / 1024) * 2 ** (exp - 15);
  }
  return halfTable;
}

/** Source bytes (little-endian F32, F16 or BF16) into out[0..n). */
export function decode(dtype: 'F32' | 'F16' | 'BF16', bytes: Buffer, out: Float32Array, n: number): void {
  if (dtype === 'F32') {
    out.set(new Float32Array(bytes.buffer, bytes.byteOffset, n));
    return;
  }
  const src = new Uint16Array(bytes.buffer, bytes.byteOffset, n);
  if (dtype === 'F16') {
    const t = halves();
    for (let i = 0; i < n; i++) out[i] = t[src[i]];
  } else {
    const bits = new Uint32Array(out.buffer, out.byteOffset, n);
    for (let i = 0; i < n; i++) bits[i] = src[i] << 16;
  }
}

/**
 * Encodes x[0..n) as type into out (which must hold outputBytes(type, n) and start at an even byte offset);
 * returns the bytes written.
 */
export function encode(type: GgmlOutType, x: Float32Array, n: number, out: Buffer): number {
  if (type === 'F32') {
    Buffer.from(x.buffer, x.byteOffset, n * 4).copy(out);
    return n * 4;
  }
  if (type === 'F16') {
    const bits = new Uint32Array(x.buffer, x.byteOffset, n);
    const halves16 = new Uint16Array(out.buffer, out.byteOffset, n);
    for (let i = 0; i < n; i++) halves16[i] = halfFromFloatBits(bits[i]);
    return n * 2;
  }
  const q = new Int8Array(out.buffer, out.byteOffset, outputBytes('Q8_0', n));
  let o = 0;
  for (let b = 0; b < n; b += Q8_0_BLOCK) {
    let amax = 0;
    for (let j = 0; j < Q8_0_BLOCK; j++) amax = Math.max(amax, Math.abs(x[b + j]));
    const d = Math.fround(amax / 127);
    const id = d ? Math.fround(1 / d) : 0;
    const h = f32ToF16(d);
    q[o] = h & 0xff; // little-endian f16 scale; Int8Array stores the low 8 bits of each
    q[o + 1] = h >>> 8;
    for (let j = 0; j < Q8_0_BLOCK; j++) {
      const v = Math.fround(x[b + j] * id);
      q[o + 2 + j] = v < 0 ? -Math.floor(-v + 0.5) : Math.floor(v + 0.5); // roundf: halves away from zero
    }
    o += Q8_0_BLOCK_BYTES;
  }
  return o;
}
