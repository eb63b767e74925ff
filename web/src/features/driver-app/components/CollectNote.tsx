// Money at the door, as the driver reads it before accepting and at the door: "cobrar R$ 57,50, levar troco para
// R$ 100,00 (R$ 42,50)", or by card. The amounts come from the delivery's `collect` (the server computes change_due).
import { useTranslation } from "react-i18next";
import type { Delivery } from "../../../api/client.ts";
import { formatBRL } from "../../../format.ts";

type Collect = NonNullable<Delivery["collect"]>;

export function CollectNote({ collect }: { collect: Collect | null | undefined }) {
  const { t } = useTranslation();
  if (!collect) return null;
  const amount = formatBRL(collect.amount);
  const text = collect.method === "card"
    ? t("driver.collect.card", { amount })
    : collect.change_for != null && collect.change_due != null
    ? t("driver.collect.cashWithChange", {
      amount,
      changeFor: formatBRL(collect.change_for),
      changeDue: formatBRL(collect.change_due),
    })
    : t("driver.collect.cash", { amount });
  return <p className="collect warning">{text}</p>;
}
