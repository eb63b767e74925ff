// Files the panel downloads from the API (the deliveries' CSV, the day's cash as CSV): one button that asks for the
// file, names it as the server's Content-Disposition does, and says what went wrong in the page.
import { useMutation } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { ErrorNote } from "./ui.tsx";

/** Saves a Blob as a file the browser downloads. */
export function saveFile(blob: Blob, name: string) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

/** What an openapi-fetch call with `parseAs: "blob"` answers. */
interface BlobAnswer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

/**
 * A button that downloads what `request` answers, named by the answer's Content-Disposition (else `fallbackName`).
 */
export function DownloadButton({ request, fallbackName }: {
  request: () => Promise<BlobAnswer>;
  fallbackName: string;
}) {
  const { t } = useTranslation();
  const download = useMutation({
    mutationFn: async () => {
      const { data, error, response } = await request();
      if (!response.ok || !data) throw error ?? new Error(String(response.status));
      const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1];
      saveFile(data as Blob, name ?? fallbackName);
    },
  });
  return (
    <>
      <button type="button" disabled={download.isPending} onClick={() => download.mutate()}>
        {download.isPending ? t("lifecycle.exporting") : t("lifecycle.exportCsv")}
      </button>
      <ErrorNote error={download.error} />
    </>
  );
}
