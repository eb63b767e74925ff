// The deliveries list as a CSV file, and deliveries created from one (GET /api/v1/deliveries/export,
// POST /api/v1/deliveries/import), with a template to fill in.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call } from "../../../api/client.ts";
import { importRowProblem } from "../../../api/errors.ts";
import { DownloadButton, saveFile } from "../../../components/download.tsx";
import { ErrorNote } from "../../../components/ui.tsx";
import type { DeliveryFilterValues } from "./Deliveries.tsx";
import { deliveryKeys } from "../api/keys.ts";
import { importJobQuery } from "../api/queries.ts";

/** The template's columns (the create body's names) and an example row. */
export const TEMPLATE = [
  "external_id,origin_address,origin.lat,origin.lng,destination_address,destination.lat,destination.lng," +
  "recipient_name,recipient_phone,recipient_email,notes,window_start,window_end",
  'PED-0001,"Praça da Sé, 100 - Sé, São Paulo",-23.5503,-46.6339,"Av. Paulista, 1578 - Bela Vista, São Paulo",' +
  "-23.5614,-46.6559,Maria da Silva,(11) 98888-7777,maria@example.com,Portaria,,",
].join("\r\n") + "\r\n";

export function CsvExport({ filters }: { filters: DeliveryFilterValues }) {
  return (
    <DownloadButton
      request={() => api.GET("/api/v1/deliveries/export", { params: { query: filters as never }, parseAs: "blob" })}
      fallbackName="entregas.csv"
    />
  );
}

export function CsvImport() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const upload = useMutation({
    mutationFn: async () =>
      await call(api.POST("/api/v1/deliveries/import", {
        body: await file!.text(),
        bodySerializer: (body: unknown) => body as string,
        headers: { "content-type": "text/csv" },
      })),
    onSuccess: () => void client.invalidateQueries({ queryKey: deliveryKeys.lists() }),
  });
  // A file of more than 500 rows is a job (202): followed until it is over, then shown as a smaller file's answer.
  const started = upload.data && "id" in upload.data ? upload.data : null;
  const job = useQuery({
    ...importJobQuery(started?.id),
    enabled: !!started,
    refetchInterval: (query) => (query.state.data?.status ?? "running") === "running" ? 1_000 : false,
  });
  const running = started ? (job.data ?? started) : null;
  const over = running && running.status !== "running";
  const finished = job.data?.status === "done";
  useEffect(() => {
    if (finished) void client.invalidateQueries({ queryKey: deliveryKeys.lists() });
  }, [finished, client]);
  const result = started ? (over ? running : null) : upload.data;
  return (
    <details className="card csv-import">
      <summary>{t("lifecycle.importCsv")}</summary>
      <p>{t("lifecycle.importHint")}</p>
      <p>
        <button
          type="button"
          onClick={() => saveFile(new Blob([TEMPLATE], { type: "text/csv" }), "modelo-entregas.csv")}
        >
          {t("lifecycle.template")}
        </button>
      </p>
      <form onSubmit={(e) => (e.preventDefault(), file && upload.mutate())}>
        <div className="field">
          <label htmlFor="csv-file">{t("lifecycle.importFile")}</label>
          <input
            id="csv-file"
            type="file"
            accept=".csv,text/csv"
            onChange={(e) => (setFile(e.target.files?.[0] ?? null), upload.reset())}
          />
        </div>
        <button type="submit" disabled={!file || upload.isPending}>
          {upload.isPending ? t("lifecycle.importing") : t("lifecycle.importCsv")}
        </button>
      </form>
      <ErrorNote error={upload.error ?? job.error} />
      {running && running.status === "running" && (
        <div role="status" className="import-progress">
          <progress
            max={running.total}
            value={running.processed}
            aria-label={t("lifecycle.importRunning", { processed: running.processed, total: running.total })}
          />
          <p>{t("lifecycle.importRunning", { processed: running.processed, total: running.total })}</p>
        </div>
      )}
      {running?.status === "failed" && (
        <p role="alert">{t("lifecycle.importFailed", { reason: running.failure ?? "" })}</p>
      )}
      {result && (
        <div role="status">
          <p>
            {t("lifecycle.imported", {
              created: result.created,
              skipped: result.skipped,
              errors: result.errors.length,
            })}
          </p>
          {result.errors.length > 0 && (
            <ul>
              {result.errors.map((e) => (
                <li key={e.row}>{t("lifecycle.importRow", { row: e.row, detail: importRowProblem(e) })}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </details>
  );
}
