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

type Value =
  null | boolean | number | bigint | string | Buffer | Value[] | Tuple | Dict | Global | PickledTensor | Storage;

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

/** The pickle opcodes a torch state dict uses (Python's Lib/pickletools.py names). */
const OP = {
  PROTO: 0x80,
  FRAME: 0x95,
  STOP: 0x2e,
  MARK: 0x28,
  EMPTY_DICT: 0x7d,
  EMPTY_LIST: 0x5d,
  EMPTY_TUPLE: 0x29,
  NONE: 0x4e,
  NEWTRUE: 0x88,
  NEWFALSE: 0x89,
  BININT1: 0x4b,
  BININT2: 0x4d,
  BININT: 0x4a,
  LONG1: 0x8a,
  BINFLOAT: 0x47,
  BINUNICODE: 0x58,
  SHORT_BINUNICODE: 0x8c,
  BINUNICODE8: 0x8d,
  SHORT_BINSTRING: 0x55,
  BINSTRING: 0x54,
  SHORT_BINBYTES: 0x43,
  BINBYTES: 0x42,
  BINPUT: 0x71,
  LONG_BINPUT: 0x72,
  MEMOIZE: 0x94,
  BINGET: 0x68,
  LONG_BINGET: 0x6a,
  GLOBAL: 0x63,
  STACK_GLOBAL: 0x93,
  TUPLE: 0x74,
  TUPLE1: 0x85,
  TUPLE2: 0x86,
  TUPLE3: 0x87,
  APPEND: 0x61,
  APPENDS: 0x65,
  SETITEM: 0x73,
  SETITEMS: 0x75,
  BUILD: 0x62,
  BINPERSID: 0x51,
  REDUCE: 0x52,
} as const;

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
  /** A little-endian length prefix of 1, 4 or 8 bytes. */
  const length = (size: 1 | 4 | 8): number => {
    need(size);
    const n = size === 1 ? data[p] : size === 4 ? data.readUInt32LE(p) : Number(data.readBigUInt64LE(p));
    p += size;
    return n;
  };
  const bytes = (n: number): Buffer => {
    need(n);
    p += n;
    return data.subarray(p - n, p);
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
      case OP.PROTO:
        need(1);
        p += 1;
        break;
      case OP.FRAME:
        need(8);
        p += 8;
        break;
      case OP.STOP: {
        const result = pop();
        if (!(result instanceof Dict)) throw bad('the top object is not a dict');
        return tensorsOf(result, bad);
      }
      case OP.MARK:
        stack.push(MARK);
        break;
      case OP.EMPTY_DICT:
        stack.push(new Dict());
        break;
      case OP.EMPTY_LIST:
        stack.push([]);
        break;
      case OP.EMPTY_TUPLE:
        stack.push(new Tuple([]));
        break;
      case OP.NONE:
        stack.push(null);
        break;
      case OP.NEWTRUE:
        stack.push(true);
        break;
      case OP.NEWFALSE:
        stack.push(false);
        break;
      case OP.BININT1:
        need(1);
        stack.push(data[p]);
        p += 1;
        break;
      case OP.BININT2:
        need(2);
        stack.push(data.readUInt16LE(p));
        p += 2;
        break;
      case OP.BININT:
        need(4);
        stack.push(data.readInt32LE(p));
        p += 4;
        break;
      case OP.LONG1: {
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
      case OP.BINFLOAT:
        need(8);
        stack.push(data.readDoubleBE(p));
        p += 8;
        break;
      case OP.BINUNICODE:
        stack.push(str(length(4), 'utf8'));
        break;
      case OP.SHORT_BINUNICODE:
        stack.push(str(length(1), 'utf8'));
        break;
      case OP.BINUNICODE8:
        stack.push(str(length(8), 'utf8'));
        break;
      case OP.SHORT_BINSTRING:
        stack.push(str(length(1), 'latin1'));
        break;
      case OP.BINSTRING:
        stack.push(str(length(4), 'latin1'));
        break;
      case OP.SHORT_BINBYTES:
        stack.push(bytes(length(1)));
        break;
      case OP.BINBYTES:
        stack.push(bytes(length(4)));
        break;
      case OP.BINPUT:
        need(1);
        memo.set(data[p], top());
        p += 1;
        break;
      case OP.LONG_BINPUT:
        need(4);
        memo.set(data.readUInt32LE(p), top());
        p += 4;
        break;
      case OP.MEMOIZE:
        memo.set(memo.size, top());
        break;
      case OP.BINGET:
      case OP.LONG_BINGET: {
        const long = op === 0x6a;
        need(long ? 4 : 1);
        const key = long ? data.readUInt32LE(p) : data[p];
        p += long ? 4 : 1;
        if (!memo.has(key)) throw bad(`memo ${key} unset`);
        stack.push(memo.get(key)!);
        break;
      }
      case OP.GLOBAL: {
        const module = line();
        stack.push(global(module, line()));
        break;
      }
      case OP.STACK_GLOBAL: {
        const name = pop();
        const module = pop();
        if (typeof module !== 'string' || typeof name !== 'string') throw bad('STACK_GLOBAL without names');
        stack.push(global(module, name));
        break;
      }
      case OP.TUPLE:
        stack.push(new Tuple(popMark()));
        break;
      case OP.TUPLE1:
        stack.push(new Tuple([pop()]));
        break;
      case OP.TUPLE2: {
        const b = pop();
        stack.push(new Tuple([pop(), b]));
        break;
      }
      case OP.TUPLE3: {
        const c = pop();
        const b = pop();
        stack.push(new Tuple([pop(), b, c]));
        break;
      }
      case OP.APPEND: {
        const v = pop();
        const list = top();
        if (!Array.isArray(list)) throw bad('APPEND');
        list.push(v);
        break;
      }
      case OP.APPENDS: {
        const items = popMark();
        const list = top();
        if (!Array.isArray(list)) throw bad('APPENDS');
        list.push(...items);
        break;
      }
      case OP.SETITEM: {
        const v = pop();
        const k = pop();
        setItems(top(), [k, v]);
        break;
      }
      case OP.SETITEMS: {
        const items = popMark();
        setItems(top(), items);
        break;
      }
      case OP.BUILD:
        // The state of an OrderedDict (e.g. its _metadata): not needed.
        pop();
        break;
      case OP.BINPERSID:
        stack.push(persistent(pop(), bad));
        break;
      case OP.REDUCE: {
        const args = pop();
        const fn = pop();
        stack.push(call(fn, args, bad));
        break;
      }
      default:
        throw bad(`opcode 0x${op.toString(16)} at byte ${p - 1}`);
    }
  }
}

/** torch's persistent id for a storage: ('storage', StorageClass, key, location, numel). */
function persistent(pid: Value, bad: (why: string) => CheckpointError): Storage {
  if (!(pid instanceof Tuple) || pid.items[0] !== 'storage') throw bad('an unknown persistent id');
  const [, type, key] = pid.items;
  if (!(type instanceof Global) || !Object.hasOwn(STORAGE_DTYPES, type.name) || typeof key !== 'string') {
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
      return {
        storageKey: storage.key,
        dtype: storage.dtype,
        storageOffset: offset,
        shape: ints(a[2], bad),
        stride: ints(a[3], bad),
      };
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
