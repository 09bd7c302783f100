/**
 * A pickle reader for torch state dicts that treats the pickle as data, never as code. Python's unpickler imports
 * and calls whatever the pickle names; this one knows the handful of globals a state dict uses and builds plain
 * values from them. Any other global (os.system, builtins.eval, …) is refused at the opcode that names it, before
 * anything else is read, and opcodes that instantiate classes (INST, OBJ, NEWOBJ, EXT*) are refused outright.
 */
import { CheckpointError } from './errors';

export type StorageDtype = 'F32' | 'F16' | 'BF16';

/** torch's storage classes as they appear in a state dict's persistent ids. */
const STORAGE_DTYPES: Readonly<Record<string, StorageDtype>> = {
  'torch.FloatStorage': 'F32',
  'torch.HalfStorage': 'F16',
  'torch.BFloat16Storage': 'BF16',
};

/** A tensor as torch._utils._rebuild_tensor_v2 describes it: a view into a storage (a zip entry). */
export interface PickledTensor {
  storageKey: string;
  dtype: StorageDtype;
  /** In elements. */
  storageOffset: number;
  shape: number[];
  stride: number[];
}

type Value = null | boolean | number | bigint | string | Buffer | Value[] | Tuple | Dict | Global | PickledTensor | Storage;

class Tuple {
  constructor(readonly items: Value[]) {}
}
class Dict {
  readonly map = new Map<string, Value>();
}
class Global {
  constructor(readonly name: string) {}
}
class Storage {
  constructor(
    readonly key: string,
    readonly dtype: StorageDtype,
  ) {}
}

const ALLOWED_GLOBALS = new Set([
  'collections.OrderedDict',
  'torch._utils._rebuild_tensor_v2',
  'torch._utils._rebuild_parameter',
  ...Object.keys(STORAGE_DTYPES),
]);

const MARK = Symbol('mark');

/**
 * Reads a state dict (a dict or OrderedDict of name → tensor) from pickle bytes; `file` names the source in
 * errors. Throws CheckpointError 'unsafe-pickle' for a global outside the allow-list.
 */
export function readStateDictPickle(data: Buffer, file: string): Map<string, PickledTensor> {
  const stack: (Value | typeof MARK)[] = [];
  const memo = new Map<number, Value>();
  let p = 0;
  const bad = (why: string): CheckpointError =>
    new CheckpointError('unsupported', `${file}: not a state dict pickle this converter reads (${why}).`);
  const need = (n: number): void => {
    if (p + n > data.length) throw new CheckpointError('truncated', `${file}: the pickle ends early: truncated.`);
  };
  const pop = (): Value => {
    const v = stack.pop();
    if (v === undefined || v === MARK) throw bad('stack underflow');
    return v;
  };
  const popMark = (): Value[] => {
    const i = stack.lastIndexOf(MARK);
    if (i < 0) throw bad('no mark');
    const items = stack.splice(i) as Value[];
    items.shift();
    return items;
  };
  const top = (): Value => {
    const v = stack[stack.length - 1];
    if (v === undefined || v === MARK) throw bad('empty stack');
    return v;
  };
  const str = (n: number, encoding: BufferEncoding): string => {
    need(n);
    const s = data.toString(encoding, p, p + n);
    p += n;
    return s;
  };
  const line = (): string => {
    const end = data.indexOf(0x0a, p);
    if (end < 0) throw new CheckpointError('truncated', `${file}: the pickle ends early: truncated.`);
    const s = data.toString('latin1', p, end);
    p = end + 1;
    return s;
  };
  const global = (module: string, name: string): Global => {
    const full = `${module}.${name}`;
    if (!ALLOWED_GLOBALS.has(full)) {
      throw new CheckpointError(
        'unsafe-pickle',
        `${file} asks to run ${full}, which a weights file never needs: refused, nothing was run. ` +
          'The file may be malicious; download the model from its original source.',
      );
    }
    return new Global(full);
  };
  const setItems = (target: Value, items: Value[]): void => {
    if (!(target instanceof Dict)) throw bad('SETITEMS on a non-dict');
    for (let i = 0; i + 1 < items.length; i += 2) {
      const key = items[i];
      if (typeof key !== 'string') throw bad('a non-string key');
      target.map.set(key, items[i + 1]);
    }
  };

  for (;;) {
    need(1);
    const op = data[p++];
    switch (op) {
      case 0x80: need(1); p += 1; break; // PROTO
      case 0x95: need(8); p += 8; break; // FRAME
      case 0x2e: { // STOP
        const result = pop();
        if (!(result instanceof Dict)) throw bad('the top object is not a dict');
        return tensorsOf(result, bad);
      }
      case 0x28: stack.push(MARK); break;
      case 0x7d: stack.push(new Dict()); break; // EMPTY_DICT
      case 0x5d: stack.push([]); break; // EMPTY_LIST
      case 0x29: stack.push(new Tuple([])); break; // EMPTY_TUPLE
      case 0x4e: stack.push(null); break; // NONE
      case 0x88: stack.push(true); break; // NEWTRUE
      case 0x89: stack.push(false); break; // NEWFALSE
      case 0x4b: need(1); stack.push(data[p]); p += 1; break; // BININT1
      case 0x4d: need(2); stack.push(data.readUInt16LE(p)); p += 2; break; // BININT2
      case 0x4a: need(4); stack.push(data.readInt32LE(p)); p += 4; break; // BININT
      case 0x8a: { // LONG1
        need(1);
        const n = data[p++];
        need(n);
        let v = 0n;
        for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(data[p + i]);
        if (n > 0 && data[p + n - 1] & 0x80) v -= 1n << BigInt(8 * n);
        p += n;
        stack.push(Number.isSafeInteger(Number(v)) ? Number(v) : v);
        break;
      }
      case 0x47: need(8); stack.push(data.readDoubleBE(p)); p += 8; break; // BINFLOAT
      case 0x58: need(4); { const n = data.readUInt32LE(p); p += 4; stack.push(str(n, 'utf8')); } break; // BINUNICODE
      case 0x8c: need(1); { const n = data[p]; p += 1; stack.push(str(n, 'utf8')); } break; // SHORT_BINUNICODE
      case 0x8d: need(8); { const n = Number(data.readBigUInt64LE(p)); p += 8; stack.push(str(n, 'utf8')); } break;
      case 0x55: need(1); { const n = data[p]; p += 1; stack.push(str(n, 'latin1')); } break; // SHORT_BINSTRING
      case 0x54: need(4); { const n = data.readUInt32LE(p); p += 4; stack.push(str(n, 'latin1')); } break; // BINSTRING
      case 0x43: need(1); { const n = data[p]; p += 1; need(n); stack.push(data.subarray(p, p + n)); p += n; } break;
      case 0x42: need(4); { const n = data.readUInt32LE(p); p += 4; need(n); stack.push(data.subarray(p, p + n)); p += n; } break;
      case 0x71: need(1); memo.set(data[p], top()); p += 1; break; // BINPUT
      case 0x72: need(4); memo.set(data.readUInt32LE(p), top()); p += 4; break; // LONG_BINPUT
      case 0x94: memo.set(memo.size, top()); break; // MEMOIZE
      case 0x68: case 0x6a: { // BINGET, LONG_BINGET
        const long = op === 0x6a;
        need(long ? 4 : 1);
        const key = long ? data.readUInt32LE(p) : data[p];
        p += long ? 4 : 1;
        if (!memo.has(key)) throw bad(`memo ${key} unset`);
        stack.push(memo.get(key)!);
        break;
      }
      case 0x63: { const module = line(); stack.push(global(module, line())); break; } // GLOBAL
      case 0x93: { // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') throw bad('STACK_GLOBAL without names');
        stack.push(global(module, name));
        break;
      }
      case 0x74: stack.push(new Tuple(popMark())); break; // TUPLE
      case 0x85: stack.push(new Tuple([pop()])); break;
      case 0x86: { const b = pop(); stack.push(new Tuple([pop(), b])); break; }
      case 0x87: { const c = pop(); const b = pop(); stack.push(new Tuple([pop(), b, c])); break; }
      case 0x61: { const v = pop(); const list = top(); if (!Array.isArray(list)) throw bad('APPEND'); list.push(v); break; }
      case 0x65: { const items = popMark(); const list = top(); if (!Array.isArray(list)) throw bad('APPENDS'); list.push(...items); break; }
      case 0x73: { const v = pop(); const k = pop(); setItems(top(), [k, v]); break; } // SETITEM
      case 0x75: { const items = popMark(); setItems(top(), items); break; } // SETITEMS
      case 0x62: pop(); break; // BUILD: state for an OrderedDict (e.g. _metadata) is not needed
      case 0x51: stack.push(persistent(pop(), bad)); break; // BINPERSID
      case 0x52: { const args = pop(); const fn = pop(); stack.push(call(fn, args, bad)); break; } // REDUCE
      default:
        throw bad(`opcode 0x${op.toString(16)} at byte ${p - 1}`);
    }
  }
}

/** torch's persistent id for a storage: ('storage', StorageClass, key, location, numel). */
function persistent(pid: Value, bad: (why: string) => CheckpointError): Storage {
  if (!(pid instanceof Tuple) || pid.items[0] !== 'storage') throw bad('an unknown persistent id');
  const [, type, key] = pid.items;
  if (!(type instanceof Global) || !(type.name in STORAGE_DTYPES) || typeof key !== 'string') {
    throw bad('a storage of an unsupported type');
  }
  return new Storage(key, STORAGE_DTYPES[type.name]);
}

function ints(v: Value, bad: (why: string) => CheckpointError): number[] {
  if (!(v instanceof Tuple) || !v.items.every((x) => typeof x === 'number')) throw bad('a shape that is not integers');
  return v.items as number[];
}

function call(fn: Value, args: Value, bad: (why: string) => CheckpointError): Value {
  if (!(fn instanceof Global) || !(args instanceof Tuple)) throw bad('REDUCE of a non-global');
  const a = args.items;
  switch (fn.name) {
    case 'collections.OrderedDict':
      return new Dict();
    case 'torch._utils._rebuild_tensor_v2': {
      const [storage, offset] = a;
      if (!(storage instanceof Storage) || typeof offset !== 'number') throw bad('a tensor without storage');
      return { storageKey: storage.key, dtype: storage.dtype, storageOffset: offset, shape: ints(a[2], bad), stride: ints(a[3], bad) };
    }
    case 'torch._utils._rebuild_parameter':
      return a[0];
    default:
      throw bad(`${fn.name} called`);
  }
}

function tensorsOf(dict: Dict, bad: (why: string) => CheckpointError): Map<string, PickledTensor> {
  const out = new Map<string, PickledTensor>();
  for (const [name, v] of dict.map) {
    if (v === null || typeof v !== 'object' || !('storageKey' in v)) throw bad(`${name} is not a tensor`);
    out.set(name, v);
  }
  return out;
}
