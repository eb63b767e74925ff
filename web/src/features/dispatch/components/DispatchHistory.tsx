// Every decision dispatch took for a delivery (GET /api/v1/deliveries/{id}/dispatch, docs/dispatch.md): each round
// with the drivers it considered (rank, distance, road duration, why any was left out, in words) and what came of
// it, and each offer with its outcome. Live: read again when the delivery changes (delivery_updated) and every 3 s
// while dispatch holds it (a next round of offers, an offer expiring, changes no field of the delivery).
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import type { Delivery, Schemas } from "../../../api/client.ts";
import { Badge, ErrorNote, Loading } from "../../../components/ui.tsx";
import { formatKm, formatMinutes, formatTime } from "../../../format.ts";
import { useRealtimeEvent } from "../../../lib/realtime.tsx";
import { dispatchKeys } from "../api/keys.ts";
import { dispatchRecordQuery } from "../api/queries.ts";
import { DataTable } from "../../../components/ui/table/index.ts";

type Round = Schemas["DispatchRound"];
type Offer = Schemas["DispatchOffer"];

const HELD_REFRESH_MS = 3_000;

function RoundRecord({ round, offers }: { round: Round; offers: Offer[] }) {
  const { t } = useTranslation();
  const names = offers.filter((o) => o.attempt === round.attempt && o.round === round.round).map((o) => o.name);
  const assigned = round.candidates.find((c) => c.driver_id === round.driver_id)?.name ?? "—";
  const outcome = round.outcome === "offered"
    ? t("dispatch.history.outcome.offered", { names: names.join(", ") || "—" })
    : round.outcome === "assigned"
    ? t("dispatch.history.outcome.assigned", { name: assigned })
    : t("dispatch.history.outcome.unassigned");
  const rankedBy = round.ranked_by === "road_duration"
    ? t("dispatch.history.rankedBy.road_duration")
    : round.ranked_by === "straight_line"
    ? t("dispatch.history.rankedBy.straight_line", { error: round.routing_error ?? "—" })
    : t("dispatch.history.rankedBy.none");
  return (
    <li className="round">
      <h3>
        {round.attempt > 1
          ? t("dispatch.history.attemptRound", { attempt: round.attempt, round: round.round })
          : t("dispatch.history.round", { round: round.round })} · {t(`dispatch.history.mode.${round.mode}`)} ·{" "}
        <time dateTime={round.ranked_at}>{formatTime(round.ranked_at)}</time>
      </h3>
      <p>
        <strong>{outcome}</strong> {rankedBy}
      </p>
      {round.candidates.length > 0 && (
        <div className="scroll-box">
          <DataTable
            className="candidates"
            caption={t("dispatch.history.candidates")}
            items={round.candidates}
            itemKey={(c) => c.driver_id}
            rowClassName={(c) => (c.left_out ? "left-out" : undefined)}
            columns={[
              {
                header: t("dispatch.history.columns.rank"),
                cell: (c) => (c.rank != null ? t("dispatch.history.rank", { rank: c.rank }) : "—"),
              },
              { header: t("dispatch.history.columns.driver"), cell: (c) => c.name },
              {
                header: t("dispatch.history.columns.trip"),
                cell: (c) =>
                  c.duration_s != null
                    ? t("dispatch.history.trip", { km: formatKm(c.distance_m), min: formatMinutes(c.duration_s) })
                    : t("dispatch.history.straight", { km: formatKm(c.distance_m) }),
              },
              {
                header: t("dispatch.history.columns.why"),
                cell: (c) => (
                  <>
                    {c.left_out ? t(`dispatch.history.leftOut.${c.left_out}`) : t("dispatch.history.eligible")}
                    {c.active_deliveries != null && c.completed_today != null && (
                      <div className="muted">
                        {t("dispatch.history.load", { active: c.active_deliveries, today: c.completed_today })}
                      </div>
                    )}
                  </>
                ),
              },
            ]}
          />
        </div>
      )}
    </li>
  );
}

/** What became of an offer: live until its deadline, then what the driver or dispatch did with it. */
function OfferOutcome({ offer }: { offer: Offer }) {
  const { t } = useTranslation();
  const outcome = offer.outcome ?? (Date.parse(offer.expires_at) > Date.now() ? "live" : "expired");
  return (
    <strong>{t(`dispatch.history.offer.${outcome}`, { at: formatTime(offer.decided_at ?? offer.expires_at) })}</strong>
  );
}

/** The dispatch record of one delivery, as a section headed by `title`. */
export function DispatchHistory(
  { delivery, headingId, title, hideWhenEmpty = false }: {
    delivery: Delivery;
    headingId: string;
    title: string;
    /** Nothing at all for a delivery dispatch never held (the delivery's page of a company that broadcasts). */
    hideWhenEmpty?: boolean;
  },
) {
  const { t } = useTranslation();
  const client = useQueryClient();
  const held = delivery.dispatch_status === "queued" || delivery.dispatch_status === "offered";
  const record = useQuery({
    ...dispatchRecordQuery(delivery.id),
    refetchInterval: held ? HELD_REFRESH_MS : false,
  });
  useRealtimeEvent((event, payload) => {
    if (event === "delivery_updated" && payload.id === delivery.id) {
      void client.invalidateQueries({ queryKey: dispatchKeys.record(delivery.id) });
    }
  });
  const rounds = record.data?.rounds ?? [];
  const offers = record.data?.offers ?? [];
  const status = delivery.dispatch_status;
  if (hideWhenEmpty && !status && (record.isPending || (rounds.length === 0 && offers.length === 0))) return null;
  return (
    <section className="dispatch-history" aria-labelledby={headingId}>
      <h2 id={headingId} tabIndex={-1}>{title}</h2>
      {status && (
        <p>
          {t("dispatch.history.now")} <Badge value={`dispatch-${status}`} text={t(`dispatch.status.${status}`)} />
        </p>
      )}
      <ErrorNote error={record.error} />
      {record.isPending
        ? <Loading />
        : rounds.length === 0 && offers.length === 0
        ? <p>{held ? t("dispatch.history.waiting") : t("dispatch.history.none")}</p>
        : (
          <>
            <ol className="rounds">
              {rounds.map((round) => (
                <RoundRecord key={`${round.attempt}/${round.round}`} round={round} offers={offers} />
              ))}
            </ol>
            <h3>{t("dispatch.history.offers")}</h3>
            {offers.length === 0 ? <p>{t("dispatch.history.noOffers")}</p> : (
              <ul className="list offers-made">
                {offers.map((offer) => (
                  <li key={offer.id}>
                    {t("dispatch.history.offer.line", {
                      name: offer.name,
                      round: offer.round,
                      at: formatTime(offer.offered_at),
                    })} <OfferOutcome offer={offer} />
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
    </section>
  );
}
