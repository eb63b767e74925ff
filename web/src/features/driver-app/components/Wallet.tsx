// The driver's wallet: balance, available balance, transactions, and
// withdrawals whose status changes live (withdrawal_updated).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, call } from "../../../api/client.ts";
import { useTranslation } from "react-i18next";
import {
  Badge,
  DecimalField,
  ErrorNote,
  Loading,
  MaskedField,
  Note,
  Pager,
  readDecimal,
  Select,
} from "../../../components/ui.tsx";
import { formatBRL, formatDateTime, withdrawalStatusText } from "../../../format.ts";
import { maskPixKey, normalizePixKey, pixKeyProblem, type PixKeyType } from "../../../lib/brazil.ts";
import type { DecimalRules } from "../../../lib/numbers.ts";
import { WithdrawalFailure } from "../../money/components/WithdrawalFailure.tsx";
import { myWithdrawalsQuery, walletEntriesQuery, walletQuery } from "../../money/api/queries.ts";
import { walletKeys, withdrawalKeys } from "../../money/api/keys.ts";

const KEY_TYPES: PixKeyType[] = ["cpf", "cnpj", "phone", "email", "evp"];
const KEY_INPUT = { cpf: "numeric", cnpj: "numeric", phone: "tel", email: "email", evp: "text" } as const;
const AMOUNT: DecimalRules = { required: true, positive: true, max: 1_000_000_000, fractionDigits: 2 };

export default function WalletPage() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const wallet = useQuery(walletQuery());
  const [cursors, setCursors] = useState<string[]>([]);
  const entries = useQuery(walletEntriesQuery(cursors.at(-1)));
  const withdrawals = useQuery(myWithdrawalsQuery());
  const [amount, setAmount] = useState("");
  const [pixKey, setPixKey] = useState("");
  const [pixKeyType, setPixKeyType] = useState<PixKeyType>("email");
  const [submitted, setSubmitted] = useState(false);
  /** A new form after each withdrawal asked: its emptied amount is not a mistake to point at. */
  const [form, setForm] = useState(0);
  const keyProblem = pixKeyProblem(pixKeyType, pixKey);
  const withdraw = useMutation({
    mutationFn: (body: { amount: number; pix_key: string; pix_key_type: PixKeyType }) =>
      call(api.POST("/api/v1/withdrawals", { body })),
    onSuccess: () => {
      setSubmitted(false);
      setAmount("");
      setForm((n) => n + 1);
      void client.invalidateQueries({ queryKey: withdrawalKeys.lists() });
      void client.invalidateQueries({ queryKey: walletKeys.all() });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    setSubmitted(true);
    const value = readDecimal(amount, AMOUNT);
    if (!value.ok || keyProblem) return;
    withdraw.mutate({
      amount: value.value!,
      pix_key: normalizePixKey(pixKeyType, pixKey),
      pix_key_type: pixKeyType,
    });
  }

  return (
    <div className="wallet">
      <section aria-labelledby="wallet-title" className="card">
        <h1 id="wallet-title">{t("wallet.title")}</h1>
        <ErrorNote error={wallet.error} />
        {wallet.data && (
          <dl className="facts">
            <dt id="balance-label">{t("wallet.balance")}</dt>
            <dd>
              <output aria-labelledby="balance-label">{formatBRL(wallet.data.balance)}</output>
            </dd>
            <dt id="available-label">{t("wallet.available")}</dt>
            <dd>
              <output aria-labelledby="available-label">{formatBRL(wallet.data.available_balance)}</output>
            </dd>
          </dl>
        )}
      </section>
      <form className="card" onSubmit={submit} aria-labelledby="withdraw-title">
        <h2 id="withdraw-title">{t("wallet.withdraw")}</h2>
        <DecimalField
          key={form}
          label={t("wallet.amount")}
          rules={AMOUNT}
          showProblem={submitted}
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
        />
        <Select
          label={t("withdrawals.pixKeyType")}
          value={pixKeyType}
          onChange={(e) => {
            const type = e.target.value as PixKeyType;
            setPixKeyType(type);
            setPixKey(maskPixKey(type, pixKey));
          }}
          options={KEY_TYPES.map((type) => [type, t(`wallet.keyTypes.${type}`)] as const)}
        />
        <MaskedField
          label={t("withdrawals.pixKey")}
          required
          autoComplete="off"
          inputMode={KEY_INPUT[pixKeyType]}
          value={pixKey}
          mask={(text) => maskPixKey(pixKeyType, text)}
          onValue={setPixKey}
          problem={keyProblem && t(`input.${keyProblem}`)}
          showProblem={submitted}
        />
        <ErrorNote error={withdraw.error} />
        {withdraw.isPending && <Note>{t("wallet.withdrawing")}</Note>}
        <button type="submit" disabled={withdraw.isPending}>{t("wallet.withdraw")}</button>
      </form>
      <section aria-labelledby="my-withdrawals-title">
        <h2 id="my-withdrawals-title">{t("wallet.myWithdrawals")}</h2>
        <ErrorNote error={withdrawals.error} />
        <ul className="list">
          {withdrawals.data?.items.length === 0 && <li>{t("withdrawals.empty")}</li>}
          {(withdrawals.data?.items ?? []).map((w) => (
            <li key={w.id} aria-label={`${formatBRL(w.amount)} ${withdrawalStatusText(w)}`}>
              {formatBRL(w.amount)} → {w.pix_key} <Badge value={w.status} text={withdrawalStatusText(w)} />{" "}
              <time dateTime={w.created_at}>{formatDateTime(w.created_at)}</time>
              {w.status === "failed" && (
                <span className="warning">
                  <WithdrawalFailure withdrawal={w} />
                </span>
              )}
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="entries-title">
        <h2 id="entries-title">{t("wallet.transactions")}</h2>
        {entries.isPending ? <Loading /> : (
          <ul className="list">
            {(entries.data?.items ?? []).length === 0 && <li>{t("wallet.empty")}</li>}
            {(entries.data?.items ?? []).map((e) => (
              <li key={e.id}>
                {t(`wallet.kinds.${e.kind}`)}: <strong>{formatBRL(e.amount)}</strong>{" "}
                <time dateTime={e.created_at}>{formatDateTime(e.created_at)}</time>
              </li>
            ))}
          </ul>
        )}
        <Pager cursors={cursors} next={entries.data?.next_cursor ?? null} onChange={setCursors} />
      </section>
    </div>
  );
}
