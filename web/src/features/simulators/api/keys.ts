// The query keys of the local simulators' inboxes.
export const simulatorKeys = {
  whatsapp: () => ["sim-whatsapp"] as const,
  mails: () => ["sim-mails"] as const,
  mail: (id: string) => ["sim-mail", id] as const,
};
