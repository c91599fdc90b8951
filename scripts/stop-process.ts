import type { ChildProcess } from 'node:child_process';

/** Asks a child to stop (SIGTERM) and kills it if it has not exited after `forceAfterMs`. */
export function stopProcess(child: ChildProcess, forceAfterMs = 10_000): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode) return resolve();
    const force = setTimeout(() => child.kill('SIGKILL'), forceAfterMs);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
