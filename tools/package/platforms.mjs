// The node-llama-cpp prebuilt binary packages each VS Code platform target ships, and what their native files
// must be (executable format and CPU), so that a package with a missing or foreign binary is caught.

/** VS Code target → @node-llama-cpp packages (the first is the CPU one node-llama-cpp falls back on). */
const TARGETS = {
  'linux-x64': { packages: ['linux-x64', 'linux-x64-vulkan'], cuda: ['linux-x64-cuda'], format: 'elf', cpu: 'x64' },
  'linux-arm64': { packages: ['linux-arm64'], format: 'elf', cpu: 'arm64' },
  'darwin-arm64': { packages: ['mac-arm64-metal'], format: 'macho', cpu: 'arm64' },
  'win32-x64': { packages: ['win-x64', 'win-x64-vulkan'], cuda: ['win-x64-cuda'], format: 'pe', cpu: 'x64' },
};

export const PLATFORM_TARGETS = Object.keys(TARGETS);

function targetOf(target) {
  const t = TARGETS[target];
  if (!t) throw new Error(`unknown target ${target}; known: ${PLATFORM_TARGETS.join(', ')}`);
  return t;
}

export function binaryPackages(target, cuda = false) {
  const t = targetOf(target);
  if (cuda && !t.cuda) throw new Error(`no CUDA binaries for ${target}`);
  return [...t.packages, ...(cuda ? t.cuda : [])];
}

/** The executable format and CPU a target's native files must have. */
export function expectedBinary(target) {
  const { format, cpu } = targetOf(target);
  return { format, cpu };
}

/** Format and CPU of a native file from its first bytes (ELF, Mach-O 64-bit, PE), or undefined when unknown. */
export function binaryKind(head) {
  if (head.length >= 20 && head.readUInt32BE(0) === 0x7f454c46) {
    const machine = head.readUInt16LE(18);
    return { format: 'elf', cpu: machine === 0x3e ? 'x64' : machine === 0xb7 ? 'arm64' : `machine ${machine}` };
  }
  if (head.length >= 8 && head.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = head.readUInt32LE(4);
    return { format: 'macho', cpu: cpu === 0x0100000c ? 'arm64' : cpu === 0x01000007 ? 'x64' : `cputype ${cpu}` };
  }
  if (head.length >= 0x40 && head.toString('latin1', 0, 2) === 'MZ') {
    const pe = head.readUInt32LE(0x3c);
    if (head.length < pe + 6 || head.toString('latin1', pe, pe + 4) !== 'PE\0\0')
      return { format: 'pe', cpu: 'unknown' };
    const machine = head.readUInt16LE(pe + 4);
    return { format: 'pe', cpu: machine === 0x8664 ? 'x64' : machine === 0xaa64 ? 'arm64' : `machine ${machine}` };
  }
  return undefined;
}
