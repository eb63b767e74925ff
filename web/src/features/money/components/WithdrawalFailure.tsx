// Why a withdrawal failed, in words: the gateway's event when that is what failed it (TRANSFER_CANCELLED says
// "Transfer cancelled"), else its failure kind, with the gateway's own answer when it refused the transfer (its
// words, which it writes in Portuguese). The platform's notes (`error_message` of a transfer in doubt, or of one the
// gateway has no record of) are for the audit trail, in English: the status and the kind already say them in words.
import { useTranslation } from "react-i18next";
import type { Withdrawal } from "../../../api/client.ts";
import { gatewayEventName } from "../../../format.ts";

const EVENT_CODE = /^[A-Z]+(_[A-Z]+)+$/;

export function WithdrawalFailure({ withdrawal }: { withdrawal: Withdrawal }) {
  const { t } = useTranslation();
  const { failure_kind: kind, error_message: message } = withdrawal;
  if (withdrawal.status !== "failed" || !kind) return null;
  if (message && EVENT_CODE.test(message)) return <>{gatewayEventName(message)}</>;
  return (
    <>
      {t(`failureKind.${kind}`)}
      {kind === "gateway_rejected" && message && <span className="hint">{` (${message})`}</span>}
    </>
  );
}
