// The Pix charge of a new delivery at the company's gateway (docs/contract.md, External services):
// reuse or make the gateway customer, create the charge with
// externalReference = the delivery id, and read its copy-paste code and QR image.
import { asService } from "../_shared/db.ts";
import { outsideIdempotencyKey } from "../_shared/request-scope.ts";
import type { CompanyGateway } from "../_shared/gateway.ts";

export interface PixCustomer {
  name: string;
  /** CPF or CNPJ as stored: digits, and an alphanumeric CNPJ's upper-case letters, no punctuation. */
  document: string;
  email?: string | null;
}

export interface PixPayment {
  gateway_payment_id: string;
  pix_copy_paste: string;
  pix_qr_code_image: string;
  due_date: string;
}

/**
 * The charge's due date: tomorrow in Brasília time (the gateway's calendar),
 * as YYYY-MM-DD. A day is enough to pay by Pix; an unpaid charge then goes
 * overdue and PAYMENT_OVERDUE cancels the delivery.
 */
export function pixDueDate(now: Date = new Date()): string {
  const tomorrow = new Date(now.getTime() + 86_400_000);
  // en-CA formats dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", { timeZone: "America/Sao_Paulo" }).format(tomorrow);
}

/**
 * The gateway customer for this document, made once per company gateway
 * account and remembered in private.gateway_configs. Two first deliveries for
 * the same document at once may both make one; the last remembered wins, and
 * either works for charging.
 */
async function gatewayCustomerId(gateway: CompanyGateway, companyId: string, customer: PixCustomer): Promise<string> {
  const [known] = await asService((tx) =>
    tx<{ id: string | null }[]>`select private.gateway_customer_id(${companyId}, ${customer.document}) as id`
  );
  if (known?.id) return known.id;
  const created = await gateway.client.createCustomer({
    name: customer.name,
    cpfCnpj: customer.document,
    ...(customer.email ? { email: customer.email } : {}),
  });
  // A cache of the gateway's, not an effect of the request: a retry with the same Idempotency-Key after a later
  // failure (the charge refused, say) is run again rather than told the first changed data.
  await outsideIdempotencyKey(() =>
    asService((tx) => tx`select private.remember_gateway_customer(${companyId}, ${customer.document}, ${created.id})`)
  );
  return created.id;
}

/**
 * Creates the Pix charge for a delivery that does not exist yet: the caller
 * inserts the delivery with `deliveryId` only after this succeeds, so a gateway
 * failure leaves no delivery behind. A failure after the charge was created
 * leaves a charge without a delivery, which is harmless: its payment events
 * find no delivery and are ignored (public.apply_payment_event).
 */
export async function createPixCharge(
  gateway: CompanyGateway,
  companyId: string,
  deliveryId: string,
  price: number,
  customer: PixCustomer,
): Promise<PixPayment> {
  const customerId = await gatewayCustomerId(gateway, companyId, customer);
  const dueDate = pixDueDate();
  const charge = await gateway.client.createPixCharge({
    customer: customerId,
    value: price,
    dueDate,
    description: `Delivery ${deliveryId}`,
    externalReference: deliveryId,
  });
  try {
    const qr = await gateway.client.pixQrCode(charge.id);
    return {
      gateway_payment_id: charge.id,
      pix_copy_paste: qr.payload,
      pix_qr_code_image: qr.encodedImage,
      due_date: dueDate,
    };
  } catch (error) {
    logOrphanCharge(companyId, deliveryId, charge.id, error);
    throw error;
  }
}

/** A charge that will never have its delivery: logged so that it can be cancelled at the gateway. */
export function logOrphanCharge(companyId: string, deliveryId: string, paymentId: string, error: unknown): void {
  console.error(JSON.stringify({
    event: "pix_charge_without_delivery",
    company_id: companyId,
    delivery_id: deliveryId,
    gateway_payment_id: paymentId,
    error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
  }));
}
