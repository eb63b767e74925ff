// bcrypt off the event loop: a small pool of workers (bcrypt-worker.ts), one
// job at a time each, so that a burst of sign-ins with wrong passwords costs
// CPU on the workers' threads while the stack's one event loop keeps serving
// everything else (GoTrue hashes on goroutines, off its request handling too).
// The pool is as large as the machine has cores, at most four.
import bcrypt from "bcryptjs";
import type { BcryptJob, BcryptResult } from "./bcrypt-worker.ts";

/** GoTrue's bcrypt cost. */
export const BCRYPT_COST = 10;
const POOL_SIZE = Math.max(1, Math.min(4, navigator.hardwareConcurrency || 1));

interface PooledWorker {
  worker: Worker;
  busy: boolean;
}

type Job = BcryptJob extends infer J ? J extends BcryptJob ? Omit<J, "id"> : never : never;

interface Pending {
  job: Job;
  resolve: (value: string | boolean) => void;
  reject: (error: Error) => void;
}

export class BcryptPool {
  readonly #workers: PooledWorker[] = [];
  readonly #queue: Pending[] = [];
  readonly #running = new Map<number, { pending: Pending; worker: PooledWorker }>();
  #nextId = 0;
  #closed = false;

  hash(password: string, cost = BCRYPT_COST): Promise<string> {
    return this.#run({ op: "hash", password, cost }) as Promise<string>;
  }

  compare(password: string, hash: string): Promise<boolean> {
    return this.#run({ op: "compare", password, hash }) as Promise<boolean>;
  }

  close(): void {
    this.#closed = true;
    for (const { worker } of this.#workers) worker.terminate();
    this.#workers.length = 0;
    for (const pending of [...this.#queue, ...[...this.#running.values()].map((r) => r.pending)]) {
      pending.reject(new Error("the bcrypt pool is closed"));
    }
    this.#queue.length = 0;
    this.#running.clear();
  }

  #run(job: Job): Promise<string | boolean> {
    if (this.#closed) return Promise.reject(new Error("the bcrypt pool is closed"));
    return new Promise((resolve, reject) => {
      this.#queue.push({ job, resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#queue.length) {
      const free = this.#workers.find((w) => !w.busy) ?? this.#spawn();
      if (!free) return;
      const pending = this.#queue.shift()!;
      const id = ++this.#nextId;
      free.busy = true;
      this.#running.set(id, { pending, worker: free });
      free.worker.postMessage({ ...pending.job, id } as BcryptJob);
    }
  }

  #spawn(): PooledWorker | null {
    if (this.#workers.length >= POOL_SIZE) return null;
    const pooled: PooledWorker = {
      worker: new Worker(new URL("./bcrypt-worker.ts", import.meta.url), { type: "module" }),
      busy: false,
    };
    pooled.worker.onmessage = (event: MessageEvent<BcryptResult>) => {
      const result = event.data;
      const running = this.#running.get(result.id);
      if (!running) return;
      this.#running.delete(result.id);
      running.worker.busy = false;
      if ("error" in result) running.pending.reject(new Error(result.error));
      else running.pending.resolve(result.value);
      this.#dispatch();
    };
    pooled.worker.onerror = (event) => {
      // A worker that died takes its job with it; the job fails, a new worker takes its place.
      event.preventDefault();
      const index = this.#workers.indexOf(pooled);
      if (index >= 0) this.#workers.splice(index, 1);
      for (const [id, running] of this.#running) {
        if (running.worker !== pooled) continue;
        this.#running.delete(id);
        running.pending.reject(new Error(`bcrypt worker failed: ${event.message}`));
      }
      pooled.worker.terminate();
      this.#dispatch();
    };
    this.#workers.push(pooled);
    return pooled;
  }
}

/** bcrypt reads only the first 72 bytes of a password. */
export const truncatedByBcrypt = (password: string): boolean => bcrypt.truncates(password);

/** The stack's one pool, started on first use. */
export const bcryptPool = new BcryptPool();
