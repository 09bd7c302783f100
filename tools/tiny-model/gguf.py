"""Minimal GGUF v3 writer (no external gguf package): key/values and F32/F16 tensors."""
import struct
import numpy as np

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
ALIGN = 32


def _s(b, text):
    data = text.encode('utf-8')
    b += struct.pack('<Q', len(data)) + data


def _val(b, vtype, v):
    if vtype == STR:
        _s(b, v)
    elif vtype == ARR:
        etype, items = v
        b += struct.pack('<IQ', etype, len(items))
        for it in items:
            _val(b, etype, it)
    else:
        fmt = {U8: 'B', I8: 'b', U16: 'H', I16: 'h', U32: 'I', I32: 'i', F32: 'f', BOOL: '?', U64: 'Q', I64: 'q', F64: 'd'}[vtype]
        b += struct.pack('<' + fmt, v)


def write(path, kvs, tensors):
    """kvs: list of (key, type, value) (arrays: (ARR, (elem_type, list))); tensors: list of (name, np.ndarray f32/f16)."""
    b = bytearray()
    b += b'GGUF' + struct.pack('<IQQ', 3, len(tensors), len(kvs) + 1)
    _s(b, 'general.alignment'); b += struct.pack('<I', U32); _val(b, U32, ALIGN)
    for key, vtype, v in kvs:
        _s(b, key); b += struct.pack('<I', vtype); _val(b, vtype, v)
    offset = 0
    blobs = []
    for name, arr in tensors:
        arr = np.ascontiguousarray(arr)
        gtype = {np.dtype('float32'): 0, np.dtype('float16'): 1}[arr.dtype]
        _s(b, name)
        b += struct.pack('<I', arr.ndim)
        for dim in reversed(arr.shape):
            b += struct.pack('<Q', dim)
        b += struct.pack('<IQ', gtype, offset)
        data = arr.tobytes()
        blobs.append(data)
        offset += len(data)
        offset += (-offset) % ALIGN
    b += b'\0' * ((-len(b)) % ALIGN)
    with open(path, 'wb') as f:
        f.write(b)
        for data in blobs:
            f.write(data)
            f.write(b'\0' * ((-len(data)) % ALIGN))
