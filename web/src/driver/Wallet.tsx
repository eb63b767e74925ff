// The driver's wallet: balance, available balance, transactions, and
// withdrawals whose status changes live (withdrawal_updated).
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, call } from "../api/client.ts";
import { Badge, ErrorNote, Field, Loading, Note, Pager, Select } from "../components/ui.tsx";
import { formatBRL, formatDateTime, withdrawalStatusText } from "../format.ts";
import { t } from "../i18n/index.ts";

const KEY_TYPES = Object.entries(t.wallet.keyTypes);

export default function WalletPage() {
  const client = useQueryClient();
  const wallet = useQuery({ queryKey: ["wallet", "me"], queryFn: () => call(api.GET("/api/v1/wallets/me")) });
  const [cursors, setCursors] = useState<string[]>([]);
  const entries = useQuery({
    queryKey: ["wallet", "entries", cursors.at(-1)],
    queryFn: () =>
      call(api.GET("/api/v1/wallets/me/transactions", { params: { query: { cursor: cursors.at(-1), limit: 20 } } })),
  });
  const withdrawals = useQuery({
    queryKey: ["withdrawals", "mine"],
    queryFn: () => call(api.GET("/api/v1/withdrawals", { params: { query: { limit: 20 } } })),
  });
  const [amount, setAmount] = useState("");
  const [pixKey, setPixKey] = useState("");
  const [pixKeyType, setPixKeyType] = useState("email");
  const withdraw = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v1/withdrawals", {
        body: { amount: Number(amount.replace(",", ".")), pix_key: pixKey, pix_key_type: pixKeyType as "email" },
      })),
    onSuccess: () => {
      setAmount("");
      void client.invalidateQueries({ queryKey: ["withdrawals"] });
      void client.invalidateQueries({ queryKey: ["wallet"] });
    },
  });
  const submit = (event: FormEvent) => (event.preventDefault(), withdraw.mutate());

  return (
    <div className="wallet">
      <section aria-labelledby="wallet-title" className="card">
        <h1 id="wallet-title">{t.wallet.title}</h1>
        <ErrorNote error={wallet.error} />
        {wallet.data && (
          <dl className="facts">
            <dt id="balance-label">{t.wallet.balance}</dt>
            <dd>
              <output aria-labelledby="balance-label">{formatBRL(wallet.data.balance)}</output>
            </dd>
            <dt id="available-label">{t.wallet.available}</dt>
            <dd>
              <output aria-labelledby="available-label">{formatBRL(wallet.data.available_balance)}</output>
            </dd>
          </dl>
        )}
      </section>
      <form className="card" onSubmit={submit} aria-labelledby="withdraw-title">
        <h2 id="withdraw-title">{t.wallet.withdraw}</h2>
        <Field
          label={t.wallet.amount}
          inputMode="decimal"
          required
          value={amount}
          onChange={(e) => setAmount(e.target.value)}
        />
        <Select
          label={t.withdrawals.pixKeyType}
          value={pixKeyType}
          onChange={(e) => setPixKeyType(e.target.value)}
          options={KEY_TYPES}
        />
        <Field label={t.withdrawals.pixKey} required value={pixKey} onChange={(e) => setPixKey(e.target.value)} />
        <ErrorNote error={withdraw.error} />
        {withdraw.isPending && <Note>{t.wallet.withdrawing}</Note>}
        <button type="submit" disabled={withdraw.isPending}>{t.wallet.withdraw}</button>
      </form>
      <section aria-labelledby="my-withdrawals-title">
        <h2 id="my-withdrawals-title">{t.wallet.myWithdrawals}</h2>
        <ErrorNote error={withdrawals.error} />
        <ul className="list">
          {(withdrawals.data?.items ?? []).map((w) => (
            <li key={w.id} aria-label={`${formatBRL(w.amount)} ${withdrawalStatusText(w)}`}>
              {formatBRL(w.amount)} → {w.pix_key} <Badge value={w.status} text={withdrawalStatusText(w)} />{" "}
              <time dateTime={w.created_at}>{formatDateTime(w.created_at)}</time>
              {w.error_message && <span className="warning">{w.error_message}</span>}
            </li>
          ))}
        </ul>
      </section>
      <section aria-labelledby="entries-title">
        <h2 id="entries-title">{t.wallet.transactions}</h2>
        {entries.isPending ? <Loading /> : (
          <ul className="list">
            {(entries.data?.items ?? []).length === 0 && <li>{t.wallet.empty}</li>}
            {(entries.data?.items ?? []).map((e) => (
              <li key={e.id}>
                {t.wallet.kinds[e.kind]}: <strong>{formatBRL(e.amount)}</strong>{" "}
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
