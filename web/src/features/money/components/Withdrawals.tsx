// The company's withdrawals, live through withdrawal_updated.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Badge, ErrorNote, Loading, Pager } from "../../../components/ui.tsx";
import { WithdrawalFailure } from "./WithdrawalFailure.tsx";
import { formatBRL, formatDateTime, shortId, withdrawalStatusText } from "../../../format.ts";
import { useTranslation } from "react-i18next";
import { withdrawalsQuery } from "../api/queries.ts";
import { driverNamesQuery } from "../../drivers/api/queries.ts";
import { DataTable } from "../../../components/ui/table/index.ts";

export default function WithdrawalsPage() {
  const { t } = useTranslation();
  const [cursors, setCursors] = useState<string[]>([]);
  const query = useQuery(withdrawalsQuery(cursors.at(-1), 20));
  const drivers = useQuery(driverNamesQuery());
  const name = (id: string) => drivers.data?.items.find((d) => d.id === id)?.name ?? shortId(id);
  return (
    <section aria-labelledby="withdrawals-title">
      <h1 id="withdrawals-title">{t("withdrawals.title")}</h1>
      <ErrorNote error={query.error} />
      {query.isPending ? <Loading /> : (
        <DataTable
          items={query.data?.items ?? []}
          itemKey={(w) => w.id}
          empty={query.data ? t("withdrawals.empty") : undefined}
          columns={[
            {
              header: t("withdrawals.requested"),
              cell: (w) => <time dateTime={w.created_at}>{formatDateTime(w.created_at)}</time>,
            },
            { header: t("withdrawals.driver"), cell: (w) => name(w.driver_id) },
            { header: t("withdrawals.amount"), cell: (w) => formatBRL(w.amount) },
            { header: t("withdrawals.pixKey"), cell: (w) => `${t(`wallet.keyTypes.${w.pix_key_type}`)}: ${w.pix_key}` },
            { header: t("withdrawals.status"), cell: (w) => <Badge value={w.status} text={withdrawalStatusText(w)} /> },
            { header: t("withdrawals.failure"), cell: (w) => <WithdrawalFailure withdrawal={w} /> },
          ]}
        />
      )}
      <Pager cursors={cursors} next={query.data?.next_cursor ?? null} onChange={setCursors} />
    </section>
  );
}
