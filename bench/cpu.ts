// CPU time per process, read from /proc (Linux; elsewhere every figure is
// null): the bench's own process (the client), the stack's Deno process (the
// Edge Functions, Auth, Realtime...) and its Postgres (the postmaster and every
// backend under it). A bench takes a snapshot before and after a phase to show
// which process spent the machine's CPU on it. Nothing here is product code.

/** CPU milliseconds (user + system, all threads) of each group. */
export interface CpuSnapshot {
  client: number;
  stack: number;
  postgres: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

interface Stat {
  pid: number;
  ppid: number;
  comm: string;
  ms: number;
}

function parseStat(text: string): Stat | null {
  // pid (comm) state ppid ... utime(14) stime(15); comm may hold spaces and parentheses.
  const close = text.lastIndexOf(")");
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(" ");
  return {
    pid: Number(text.slice(0, text.indexOf(" "))),
    comm: text.slice(text.indexOf("(") + 1, close),
    ppid: Number(fields[1]),
    ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS,
  };
}

function allStats(): Stat[] {
  const stats: Stat[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = parseStat(Deno.readTextFileSync(`/proc/${entry.name}/stat`));
      if (stat) stats.push(stat);
    } catch { /* gone meanwhile */ }
  }
  return stats;
}

/** The CPU spent so far by the client, the stack's process and the processes under it (its Postgres). */
export function cpuSnapshot(stackPid: number | undefined): CpuSnapshot | null {
  if (stackPid === undefined) return null;
  let stats: Stat[];
  try {
    stats = allStats();
  } catch {
    return null;
  }
  const byPid = new Map(stats.map((s) => [s.pid, s]));
  const underStack = (s: Stat) => {
    for (let p = s.ppid, hops = 0; p > 1 && hops < 10; p = byPid.get(p)?.ppid ?? 0, hops++) {
      if (p === stackPid) return true;
    }
    return false;
  };
  let postgres = 0;
  for (const s of stats) if (underStack(s)) postgres += s.ms;
  return { client: byPid.get(Deno.pid)?.ms ?? 0, stack: byPid.get(stackPid)?.ms ?? 0, postgres };
}

export function cpuSince(before: CpuSnapshot | null, after: CpuSnapshot | null): CpuSnapshot | null {
  if (!before || !after) return null;
  return {
    client: after.client - before.client,
    stack: after.stack - before.stack,
    postgres: after.postgres - before.postgres,
  };
}

export function addCpu(into: CpuSnapshot, more: CpuSnapshot | null): void {
  if (!more) return;
  into.client += more.client;
  into.stack += more.stack;
  into.postgres += more.postgres;
}

/** "CPU per request: client 0.31 ms, stack 0.92 ms, Postgres 0.80 ms" */
export function cpuPerRequest(cpu: CpuSnapshot, requests: number): string {
  const per = (ms: number) => `${(ms / requests).toFixed(2)} ms`;
  return `CPU per request: client ${per(cpu.client)}, stack (Deno) ${per(cpu.stack)}, Postgres ${per(cpu.postgres)}`;
}
