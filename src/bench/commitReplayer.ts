/**
 * Replays a repository's history into an index the way an editor sees a commit land: the index is built once at an
 * older commit, then each later commit's files change on disk and reach the index through FileRefresher (the
 * worker's path for file events) or `remove` (a deleted file). Each commit's added product lines are cut into tasks
 * in the file as the commit left it; the commit's other changed files are the recent files of those tasks.
 */
import { promises as fs } from 'fs';
import * as path from 'path';
import { languageForPath } from '../index/languages';
import { SourceParser } from '../index/parser';
import { isProductSource } from '../index/productPath';
import { questionLines, type QuestionKind } from '../index/questionLines';
import { readSourceFile } from '../index/readSource';
import { RepoIndex } from '../index/repoIndex';
import { buildIndex, FileRefresher, type BuildReport } from '../index/workspace';
import { RECENT_FILE_CHARS, RECENT_FILES } from '../retrieval/recent';
import type { RecentFile } from '../retrieval/types';
import { wordCounts } from '../index/tokenize';
import { toTask, type Task } from './makeTasks';
import { addedRows, changedPaths, extractTree, parentsOf, readObjects, writeFileIn } from './gitHistory';

/** Why a commit gives no tasks (its changes still reach the index). */
export type SkipCause = 'formatting';

export interface ReplayTask {
  task: Task;
  /** The commit's other changed files, most recently touched first, as the editor sends them. */
  recent: RecentFile[];
}

export interface ReplayedCommit {
  commit: string;
  skipped?: SkipCause;
  /** Indexed files the commit changed, added or deleted, in the order an editor would have touched them. */
  touched: string[];
  /** Milliseconds of each index update (refresh or removal) of an indexed file the commit changed. */
  updateMs: number[];
  /** Indexed files changed to bring the index from the last replayed commit to this one's parent (another branch). */
  caughtUp: string[];
  tasks: ReplayTask[];
}

/** One move of the replayed tree and its index to another commit. */
interface Move {
  touched: string[];
  updateMs: number[];
  /** The indexed text of each touched file before the move (absent: the file was not indexed). */
  before: Map<string, string>;
}

export class CommitReplayer {
  readonly index: RepoIndex;
  /** The text of every indexed file as the last replayed commit left it. */
  readonly texts = new Map<string, string>();
  private readonly refresher: FileRefresher;
  private readonly parser = new SourceParser();
  private head: string;

  private constructor(
    private readonly gitDir: string,
    readonly root: string,
    base: string,
    readonly build: BuildReport,
    index: RepoIndex,
  ) {
    this.index = index;
    this.head = base;
    this.refresher = new FileRefresher(index, { root });
  }

  /** Writes `base`'s tree into `root` (an empty folder) and builds the index there, cold. */
  static async start(gitDir: string, base: string, root: string): Promise<CommitReplayer> {
    await extractTree(gitDir, base, root);
    const index = new RepoIndex(root);
    const build = await buildIndex(index, { root, fresh: true });
    const replayer = new CommitReplayer(gitDir, root, base, build, index);
    for (const filePath of index.files.keys()) await replayer.reread(filePath);
    return replayer;
  }

  /**
   * Applies the non-merge `commit`, then cuts its tasks. Where its parent is not the last replayed commit (a pull
   * request's first commit, branched elsewhere), the tree first moves to that parent, as a checkout would; that
   * move is no edit and is not timed as one.
   */
  async apply(commit: string): Promise<ReplayedCommit> {
    const [parent] = parentsOf(this.gitDir, commit);
    const caughtUp = parent === this.head ? [] : (await this.moveTo(parent)).touched;
    const { touched, updateMs, before } = await this.moveTo(commit);
    const order = this.editorOrder(touched);
    const added = addedRows(this.gitDir, parent, commit);
    if (added.formatting) return { commit, skipped: 'formatting', touched: order, updateMs, caughtUp, tasks: [] };
    const tasks: ReplayTask[] = [];
    for (const file of order) {
      const rows = added.rows.get(file);
      if (!rows?.size || !isProductSource(file) || !this.texts.has(file)) continue;
      const recent = order
        .filter((p) => p !== file && this.texts.has(p))
        .reverse()
        .slice(0, RECENT_FILES)
        .map((p) => ({ path: p, text: this.texts.get(p)!.slice(0, RECENT_FILE_CHARS) }));
      const mentioned = wordCounts(before.get(file) ?? '');
      for (const task of await this.tasksOf(file, rows, commit, mentioned)) tasks.push({ task, recent });
    }
    return { commit, touched: order, updateMs, caughtUp, tasks };
  }

  /** Writes the files that differ between the last replayed commit and `target`, each reaching the index. */
  private async moveTo(target: string): Promise<Move> {
    const changed = changedPaths(this.gitDir, this.head, target);
    this.head = target;
    const contents = readObjects(
      this.gitDir,
      changed.map((c) => (c.status === 'D' ? '' : `${target}:${c.path}`)).filter(Boolean),
    );
    const move: Move = { touched: [], updateMs: [], before: new Map() };
    let next = 0;
    for (const change of changed) {
      const content = change.status === 'D' ? undefined : contents[next++];
      if (content) await writeFileIn(this.root, change.path, content);
      else await fs.rm(path.join(this.root, change.path), { force: true });
      const started = performance.now();
      const indexed =
        content === undefined
          ? this.index.remove(change.path)
          : (await this.refresher.refresh(change.path)) === 'updated' || this.index.files.has(change.path);
      const ms = performance.now() - started;
      const old = this.texts.get(change.path);
      if (!indexed && old === undefined) continue;
      move.updateMs.push(ms);
      move.touched.push(change.path);
      if (old !== undefined) move.before.set(change.path, old);
      await this.reread(change.path);
    }
    return move;
  }

  dispose(): void {
    this.parser.dispose();
    this.index.dispose();
  }

  /** Keeps `texts` as the index holds the file: its disk text when indexed, nothing otherwise. */
  private async reread(filePath: string): Promise<void> {
    const read = this.index.files.has(filePath) ? await readSourceFile(this.root, filePath) : undefined;
    if (read && 'text' in read) this.texts.set(filePath, read.text);
    else this.texts.delete(filePath);
  }

  /**
   * The order a commit's files were most likely written in: a file before the changed files that import it (what
   * is used is written before its use), otherwise in path order.
   */
  private editorOrder(files: readonly string[]): string[] {
    const changed = new Set(files);
    const order: string[] = [];
    const visited = new Set<string>();
    const visit = (file: string): void => {
      if (visited.has(file)) return;
      visited.add(file);
      const targets = this.index.imports(file).flatMap((i) => i.targets);
      for (const target of [...new Set(targets)].sort()) if (changed.has(target)) visit(target);
      order.push(file);
    };
    for (const file of [...files].sort()) visit(file);
    return order;
  }

  /**
   * The task lines of one changed file among the rows the commit added, cut as make-tasks cuts them; a name the
   * file's previous version never `mentioned` is novel on the row that first uses it (decision R25).
   */
  private async tasksOf(
    file: string,
    rows: ReadonlySet<number>,
    commit: string,
    mentioned: ReadonlyMap<string, number>,
  ): Promise<Task[]> {
    const text = this.texts.get(file)!;
    const language = languageForPath(file)!;
    const tree = await this.parser.parse(file, language, text);
    const declaredElsewhere = (name: string): boolean => this.index.declaredElsewhere(name, file);
    const found = questionLines(file, text, tree, language.id, declaredElsewhere, false, (n) => !mentioned.has(n));
    this.parser.forget(file);
    const repository = `${path.basename(this.root)}@${commit.slice(0, 10)}`;
    const tasks: Task[] = [];
    for (const kind of ['cross', 'infile'] as QuestionKind[]) {
      for (const line of found[kind]) if (rows.has(line.row)) tasks.push(toTask(line, kind, text, repository));
    }
    return tasks;
  }
}
