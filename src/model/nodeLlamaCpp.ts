/**
 * node-llama-cpp is ESM-only and large: it is imported lazily, once, on first use. A plain dynamic import
 * through Function keeps tsc (CommonJS output) from turning it into require(); esbuild leaves it external.
 */
type NodeLlamaCpp = typeof import('node-llama-cpp');

let loading: Promise<NodeLlamaCpp> | undefined;

export function importNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  loading ??= (new Function('m', 'return import(m)') as (m: string) => Promise<NodeLlamaCpp>)('node-llama-cpp');
  return loading;
}
