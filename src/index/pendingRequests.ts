/**
 * Requests answered by id over a message channel (a worker thread, a child process): numbers them, keeps each
 * one's settlers until its answer comes, and fails all of them when the other side goes away. Shared by the
 * index client, the engine client and the engine process; here, in the bottom layer, so that all may import it.
 */
interface Open<T, Extra> {
  resolve(value: T): void;
  reject(error: Error): void;
  extra: Extra;
}

export class PendingRequests<T, Extra = undefined> {
  private nextId = 1;
  private readonly open = new Map<number, Open<T, Extra>>();

  /** A new request: `send` posts it under its id; if `send` throws, the request fails with that error. */
  request(send: (id: number) => void, extra: Extra): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.open.set(id, { resolve, reject, extra });
      try {
        send(id);
      } catch (error) {
        this.open.delete(id);
        reject(error as Error);
      }
    });
  }

  has(id: number): boolean {
    return this.open.has(id);
  }

  /** What the caller attached to an open request (a streaming callback), or undefined once it has settled. */
  extra(id: number): Extra | undefined {
    return this.open.get(id)?.extra;
  }

  resolve(id: number, value: T): void {
    this.take(id)?.resolve(value);
  }

  reject(id: number, error: Error): void {
    this.take(id)?.reject(error);
  }

  /** The other side is gone: every open request fails with `error`. */
  rejectAll(error: Error): void {
    const open = [...this.open.values()];
    this.open.clear();
    for (const request of open) request.reject(error);
  }

  private take(id: number): Open<T, Extra> | undefined {
    const request = this.open.get(id);
    this.open.delete(id);
    return request;
  }
}
