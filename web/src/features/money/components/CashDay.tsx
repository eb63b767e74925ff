// The end of the day at the door (GET /api/v1/cash/summary): per driver, the cash collected, card payments apart,
// what was handed in, what is still owed and how many deliveries collected another amount than asked; the owner or
// an admin records the cash a driver hands in (POST /api/v1/drivers/{id}/cash-settlements), never more than is owed
// (the server says so); the same lines as CSV. Below 640 px each driver is a card (`table.cards`), as the other lists.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTranslation } from "react-i18next";
import { api, call } from "../../../api/client.ts";
import { DateField, DecimalField, ErrorNote, Loading, Note, readDecimal } from "../../../components/ui.tsx";
import { formatBRL, formatInputNumber, timeZone } from "../../../format.ts";
import { DownloadButton } from "../../../components/download.tsx";
import { useSearchParams } from "../../../lib/router.tsx";
import { moneyKeys } from "../api/keys.ts";
import { cashDayQuery } from "../api/queries.ts";

const today = () => new Intl.DateTimeFormat("en-CA", { timeZone: timeZone() }).format(new Date());
const MONEY = { required: true, positive: true, fractionDigits: 2 };

function Settle({ driverId, name, outstanding }: { driverId: string; name: string; outstanding: number }) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const [text, setText] = useState(formatInputNumber(outstanding, 2));
  const amount = readDecimal(text, MONEY);
  const settle = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/drivers/{id}/cash-settlements", {
        params: { path: { id: driverId } },
        body: { amount: amount.ok ? amount.value! : 0 },
        headers: { "Idempotency-Key": crypto.randomUUID() },
      })),
    onSuccess: (settlement) => {
      // What is still owed is what the next hand-in is likely to be.
      setText(formatInputNumber(settlement.outstanding as number, 2));
      void client.invalidateQueries({ queryKey: moneyKeys.cashDays() });
    },
  });
  return (
    <form
      className="inline"
      aria-label={t("cash.settleFor", { name })}
      onSubmit={(e) => {
        e.preventDefault();
        if (amount.ok) settle.mutate();
      }}
    >
      <DecimalField label={t("cash.amount")} value={text} rules={MONEY} onChange={(e) => setText(e.target.value)} />
      <button type="submit" disabled={!amount.ok || settle.isPending}>{t("cash.settle")}</button>
      <ErrorNote error={settle.error} />
      {settle.isSuccess && <Note>{t("cash.settled", { amount: formatBRL(settle.data.amount as number) })}</Note>}
    </form>
  );
}

/** The day's lines as the API writes them in CSV (GET /api/v1/cash/summary?format=csv). */
function CashCsv({ date }: { date: string }) {
  return (
    <DownloadButton
      request={() => api.GET("/api/v1/cash/summary", { params: { query: { date, format: "csv" } }, parseAs: "blob" })}
      fallbackName={`cash-${date}.csv`}
    />
  );
}

export default function CashDayPage() {
  const { t } = useTranslation();
  const [params, setParams] = useSearchParams();
  const date = params.get("date") ?? today();
  const summary = useQuery(cashDayQuery(date));
  const items = summary.data?.items ?? [];
  return (
    <section aria-labelledby="cash-title">
      <h1 id="cash-title">{t("cash.title")}</h1>
      <DateField
        label={t("cash.date")}
        day={date}
        required
        onDay={(day) => day && setParams(new URLSearchParams({ date: day }))}
      />
      <CashCsv date={date} />
      <ErrorNote error={summary.error} />
      {summary.isLoading ? <Loading /> : items.length === 0 ? <p>{t("cash.none")}</p> : (
        <table className="cards">
          <caption>{t("cash.caption", { date })}</caption>
          <thead>
            <tr>
              <th scope="col">{t("cash.driver")}</th>
              <th scope="col">{t("cash.collected")}</th>
              <th scope="col">{t("cash.card")}</th>
              <th scope="col">{t("cash.handedIn")}</th>
              <th scope="col">{t("cash.outstanding")}</th>
              <th scope="col">{t("cash.mismatches")}</th>
              <th scope="col">{t("cash.settle")}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((line) => (
              <tr key={line.driver_id}>
                <th scope="row">{line.name}</th>
                <td data-label={t("cash.collected")}>{formatBRL(line.collected as number)}</td>
                <td data-label={t("cash.card")}>{formatBRL(line.card_collected as number)}</td>
                <td data-label={t("cash.handedIn")}>{formatBRL(line.settled as number)}</td>
                <td data-label={t("cash.outstanding")}>{formatBRL(line.outstanding as number)}</td>
                <td data-label={t("cash.mismatches")}>{line.mismatches}</td>
                <td>
                  {(line.outstanding as number) > 0 && (
                    <Settle driverId={line.driver_id} name={line.name} outstanding={line.outstanding as number} />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
