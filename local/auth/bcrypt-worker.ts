// One of local/auth/passwords.ts's workers: bcrypt, computed here so that the
// stack's event loop never waits for it.
import bcrypt from "bcryptjs";

export type BcryptJob =
  | { id: number; op: "hash"; password: string; cost: number }
  | { id: number; op: "compare"; password: string; hash: string };

export type BcryptResult = { id: number; value: string | boolean } | { id: number; error: string };

// A worker's global scope; typed here by hand, as the stack is checked with the window's types.
const scope = self as unknown as {
  onmessage: (event: MessageEvent<BcryptJob>) => void;
  postMessage(message: BcryptResult): void;
};

scope.onmessage = (event: MessageEvent<BcryptJob>) => {
  const job = event.data;
  try {
    const value = job.op === "hash"
      ? bcrypt.hashSync(job.password, job.cost)
      : bcrypt.compareSync(job.password, job.hash);
    scope.postMessage({ id: job.id, value } satisfies BcryptResult);
  } catch (error) {
    scope.postMessage(
      { id: job.id, error: error instanceof Error ? error.message : String(error) } satisfies BcryptResult,
    );
  }
};
