// Which proof of delivery the company requires before a driver may complete a
// delivery. Every manager sees it; owners and admins change it.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, call } from "../../../api/client.ts";
import { ErrorNote, Note } from "../../../components/ui.tsx";
import { useTranslation } from "react-i18next";
import { can, COMPANY_MANAGERS, useAuth } from "../../../lib/auth.tsx";
import { deliveryKeys } from "../api/keys.ts";
import { proofRequirementsQuery } from "../api/queries.ts";

type Kind = "photo" | "signature" | "note" | "handover_code";
const KINDS: Kind[] = ["photo", "signature", "note", "handover_code"];

export function ProofRequirements() {
  const { t } = useTranslation();
  const { identity } = useAuth();
  const client = useQueryClient();
  const editable = can(identity, COMPANY_MANAGERS);
  const query = useQuery(proofRequirementsQuery());
  const save = useMutation({
    mutationKey: deliveryKeys.proofRequirements(),
    mutationFn: (body: Record<Kind, boolean>) => call(api.PUT("/api/v1/companies/me/proof-requirements", { body })),
    // The box shows the new state at once; the server's answer (or a refetch after an error) settles it.
    onMutate: (body) => client.setQueryData(deliveryKeys.proofRequirements(), body),
    // A later click still on its way has the newer state: its own answer will settle it.
    onSuccess: (saved) => {
      if (client.isMutating({ mutationKey: deliveryKeys.proofRequirements() }) <= 1) {
        client.setQueryData(deliveryKeys.proofRequirements(), saved);
      }
    },
    onError: () => void client.invalidateQueries({ queryKey: deliveryKeys.proofRequirements() }),
  });
  const current = query.data;
  return (
    <fieldset className="card">
      <legend>{t("proofRequirements.title")}</legend>
      <p className="hint">{t("proofRequirements.hint")}</p>
      <ErrorNote error={query.error ?? save.error} />
      {current && KINDS.map((kind) => (
        <label key={kind} className="check">
          <input
            type="checkbox"
            checked={current[kind]}
            disabled={!editable}
            onChange={(e) => save.mutate({ ...current, [kind]: e.target.checked })}
          />
          {t(`proofRequirements.${kind}`)}
        </label>
      ))}
      {save.isSuccess && <Note>{t("proofRequirements.saved")}</Note>}
    </fieldset>
  );
}
