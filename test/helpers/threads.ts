import { readdirSync, readFileSync } from 'fs';

/** The nice value of each thread of process `pid` ('self' for this one), by thread id (Linux's /proc). */
export function threadNices(pid: number | 'self'): Map<string, number> {
  return new Map(
    readdirSync(`/proc/${pid}/task`).map((task) => [
      task,
      Number(
        readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[16],
      ),
    ]),
  );
}
