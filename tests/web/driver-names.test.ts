// Namesakes told apart in the panel's driver lists (issue 33): two "Maria Oliveira" by their phone's last digits.
import { describe, expect, it } from "vitest";
import { driverLabel } from "../../web/src/features/drivers/drivers.ts";

describe("driverLabel", () => {
  const drivers = [
    { id: "1", name: "Maria Oliveira", phone: "+5511988881234", email: "maria1@example.com" },
    { id: "2", name: "maria oliveira ", phone: "+5511977775678", email: "maria2@example.com" },
    { id: "3", name: "Maria Oliveira", phone: null, email: "maria3@example.com" },
    { id: "4", name: "João Souza", phone: "+5511966660000", email: "joao@example.com" },
  ];
  it("tells namesakes apart by phone, else e-mail, and leaves a unique name as it is", () => {
    expect(drivers.map((d) => driverLabel(d, drivers))).toEqual([
      "Maria Oliveira (…1234)",
      "maria oliveira (…5678)",
      "Maria Oliveira (maria3@example.com)",
      "João Souza",
    ]);
  });
});
