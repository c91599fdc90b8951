/**
 * Work an API process does after a response has gone out (outbox starts and their re-drives):
 * tracked so shutdown waits for it, and a periodic job that never keeps the process alive.
 */
export class BackgroundWork {
  private readonly inFlight = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | null = null;
  private isClosed = false;

  /** True once close() was called: loops over pending work stop early. */
  get closed(): boolean {
    return this.isClosed;
  }

  track<T>(p: Promise<T>): Promise<T> {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p)).catch(() => {});
    return p;
  }

  /** Runs `job` every `everyMs` until close; its failures go to `onError`. */
  every(everyMs: number, job: () => Promise<unknown>, onError: (err: unknown) => void): void {
    const tick = () => {
      this.timer = setTimeout(() => {
        if (this.isClosed) return;
        this.track(job().catch(onError));
        tick();
      }, everyMs);
      this.timer.unref();
    };
    tick();
  }

  /** Stops the periodic job and waits for everything under way. */
  async close(): Promise<void> {
    this.isClosed = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }
}
