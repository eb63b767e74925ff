// Large imports as jobs (DESIGN.md §11.2, issue 33): a file of more than 500 rows answers 202 with the import's
// id and Location, runs to completion in batches with its progress in GET /api/v1/imports/{id} and as
// import_progress on the company's topic, creates exactly the file's rows, and the same file sent again with its
// Idempotency-Key is the same job. Another company's import is 404; a driver may not read one.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createCompany, db, type Member, type TestCompany } from "../../support/api.ts";
import { largeFile } from "../../support/import-files.ts";
import { listen, until } from "../../support/realtime.ts";
import { waitFor } from "../../support/wait.ts";

let a: TestCompany;
let b: TestCompany;

beforeAll(async () => {
  a = await createCompany("Importação grande A");
  b = await createCompany("Importação grande B");
});

const importCsv = (who: Member, text: string, headers: Record<string, string> = {}) =>
  api("/api/v1/deliveries/import", {
    method: "POST",
    token: who.token,
    rawBody: text,
    headers: { "content-type": "text/csv", ...headers },
  });

describe("POST /api/v1/deliveries/import of more than 500 rows", () => {
  it(
    "is a job: 202, progress in GET /imports/{id} and import_progress, exactly the file's rows at the end",
    async () => {
      const tag = `IJ${randomUUID().slice(0, 6)}`;
      const progress = await listen(`company:${a.companyId}`, a.owner.token, { event: "import_progress" });
      expect(progress.status).toBe("SUBSCRIBED");
      const file = largeFile(tag, 1200, 2);
      const key = `import-${tag}`;

      const started = await importCsv(a.admin, file, { "Idempotency-Key": key });
      expect(started.status, JSON.stringify(started.body)).toBe(202);
      expect(started.body).toMatchObject({ status: "running", total: 1200 });
      expect(started.headers.get("location")).toBe(`/api/v1/imports/${started.body.id}`);

      // The same file with its key: the same job.
      const again = await importCsv(a.admin, file, { "Idempotency-Key": key });
      expect(again.status).toBe(202);
      expect(again.body.id).toBe(started.body.id);

      const seen: number[] = [];
      const done = await waitFor(
        "the import to be done",
        async () => {
          const res = await api(`/api/v1/imports/${started.body.id}`, { token: a.owner.token });
          expect(res.status).toBe(200);
          seen.push(res.body.processed);
          return res.body.status === "done" ? res.body : null;
        },
        420_000,
        200,
      );
      expect(done).toMatchObject({ total: 1200, processed: 1200, created: 1198, skipped: 0 });
      expect(done.errors.map((e: { row: number }) => e.row)).toEqual([2, 3]);
      // Progress as it went: the processed count only grows, and was seen between the start and the end.
      expect(seen).toEqual([...seen].sort((x, y) => x - y));
      // The last broadcast may come a moment after the GET that saw the end.
      await until(() => progress.inbox.at(-1)?.payload.status === "done", 10_000);
      const told = progress.inbox.map((m) => m.payload);
      expect(told.some((p) => p.processed > 2 && p.processed < 1200), JSON.stringify(told.map((p) => p.processed)))
        .toBe(true);
      expect(told.at(-1)).toMatchObject({ id: started.body.id, status: "done", processed: 1200, errors: 2 });

      // Exactly the file's rows, each once (rows without an external_id too).
      const [{ rows, distinct }] = await db()`
      select count(*)::integer as rows, count(distinct notes)::integer as distinct
      from public.deliveries where company_id = ${a.companyId} and notes like ${tag + " linha %"}`;
      expect({ rows, distinct }).toEqual({ rows: 1198, distinct: 1198 });
    },
    480_000,
  );

  it("a smaller file is still answered at once", async () => {
    const res = await importCsv(a.owner, largeFile(`IS${randomUUID().slice(0, 6)}`, 50));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ created: 50, skipped: 0, errors: [] });
  }, 60_000);

  it("starts at 501 rows, and is read by the company's managers only", async () => {
    const started = await importCsv(a.owner, largeFile(`IR${randomUUID().slice(0, 6)}`, 501));
    expect(started.status).toBe(202);
    expect((await api(`/api/v1/imports/${started.body.id}`, { token: a.admin.token })).status).toBe(200);
    expect((await api(`/api/v1/imports/${started.body.id}`, { token: a.driver.token })).status).toBe(403);
    expect((await api(`/api/v1/imports/${started.body.id}`, { token: b.owner.token })).status).toBe(404);
    expect((await api(`/api/v1/imports/${randomUUID()}`, { token: a.owner.token })).status).toBe(404);
    // Left to finish before the next file's tests.
    await waitFor(
      "the import to be done",
      async () => {
        const res = await api(`/api/v1/imports/${started.body.id}`, { token: a.owner.token });
        return res.body.status === "done" ? true : null;
      },
      300_000,
      250,
    );
  }, 330_000);
});
