// Why a withdrawal failed, in words: the gateway's event when that is what failed it (TRANSFER_CANCELLED says
// "Transfer cancelled"), else its failure kind, with what the gateway answered when it answered something.
import { useTranslation } from "react-i18next";
import type { Withdrawal } from "../api/client.ts";
import { gatewayEventName } from "../format.ts";

const EVENT_CODE = /^[A-Z]+(_[A-Z]+)+$/;

export function WithdrawalFailure({ withdrawal }: { withdrawal: Withdrawal }) {
  const { t } = useTranslation();
  const { failure_kind: kind, error_message: message } = withdrawal;
  if (message && EVENT_CODE.test(message)) return <>{gatewayEventName(message)}</>;
  if (!kind && !message) return null;
  return (
    <>
      {kind && t(`failureKind.${kind}`)}
      {message && <span className="hint">{kind ? ` (${message})` : message}</span>}
    </>
  );
}
