// The company's withdrawals, live through withdrawal_updated.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Badge, ErrorNote, Loading, Pager } from "../../../components/ui.tsx";
import { WithdrawalFailure } from "./WithdrawalFailure.tsx";
import { formatBRL, formatDateTime, shortId, withdrawalStatusText } from "../../../format.ts";
import { useTranslation } from "react-i18next";
import { withdrawalsQuery } from "../api/queries.ts";
import { driverNamesQuery } from "../../drivers/api/queries.ts";

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
        <table className="cards">
          <thead>
            <tr>
              <th scope="col">{t("withdrawals.requested")}</th>
              <th scope="col">{t("withdrawals.driver")}</th>
              <th scope="col">{t("withdrawals.amount")}</th>
              <th scope="col">{t("withdrawals.pixKey")}</th>
              <th scope="col">{t("withdrawals.status")}</th>
              <th scope="col">{t("withdrawals.failure")}</th>
            </tr>
          </thead>
          <tbody>
            {query.data?.items.length === 0 && (
              <tr>
                <td colSpan={6}>{t("withdrawals.empty")}</td>
              </tr>
            )}
            {query.data?.items.map((w) => (
              <tr key={w.id}>
                <td data-label={t("withdrawals.requested")}>
                  <time dateTime={w.created_at}>{formatDateTime(w.created_at)}</time>
                </td>
                <td data-label={t("withdrawals.driver")}>{name(w.driver_id)}</td>
                <td data-label={t("withdrawals.amount")}>{formatBRL(w.amount)}</td>
                <td data-label={t("withdrawals.pixKey")}>
                  {t(`wallet.keyTypes.${w.pix_key_type}`)}: {w.pix_key}
                </td>
                <td data-label={t("withdrawals.status")}>
                  <Badge value={w.status} text={withdrawalStatusText(w)} />
                </td>
                <td data-label={t("withdrawals.failure")}>
                  <WithdrawalFailure withdrawal={w} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager cursors={cursors} next={query.data?.next_cursor ?? null} onChange={setCursors} />
    </section>
  );
}
