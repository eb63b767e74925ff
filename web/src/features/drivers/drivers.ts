// Drivers as the panel names them in lists: two drivers with one name (two "Maria Oliveira") are told apart by
// their phone's last digits, else by their e-mail.

interface NamedDriver {
  id: string;
  name: string;
  phone?: string | null;
  email?: string | null;
}

const key = (name: string) => name.trim().toLocaleLowerCase("pt-BR");

/** The driver's name, with what tells it from a namesake among `all` (phone's last 4 digits, else e-mail). */
export function driverLabel(driver: NamedDriver, all: readonly NamedDriver[]): string {
  const namesake = all.some((other) => other.id !== driver.id && key(other.name) === key(driver.name));
  if (!namesake) return driver.name;
  const digits = (driver.phone ?? "").replace(/\D/g, "");
  const name = driver.name.trim();
  if (digits.length >= 4) return `${name} (…${digits.slice(-4)})`;
  return driver.email ? `${name} (${driver.email})` : `${name} (${driver.id.slice(0, 8)})`;
}
