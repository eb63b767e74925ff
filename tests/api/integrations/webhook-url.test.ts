// Where webhooks (and Web Push) may go (functions/_shared/webhook-url.ts):
// each way of writing a private, loopback, link-local or reserved address,
// IPv6 forms that embed an IPv4 address included, is refused, whatever name
// or literal carries it; a public address and an allowed host are not.
import { describe, expect, it } from "vitest";
import { checkWebhookUrl, isPublicAddress } from "../../../functions/_shared/webhook-url.ts";

const noDns = () => Promise.reject(new Error("no DNS in this test"));

describe("webhook addresses", () => {
  it("refuse every non-public address, in every IPv4 and IPv6 form", () => {
    for (
      const address of [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "255.255.255.255",
        "::1",
        "::",
        "::ffff:127.0.0.1",
        "::ffff:a9fe:a9fe",
        // IPv4-translated (SIIT, RFC 6145): ::ffff:0:a.b.c.d
        "::ffff:0:127.0.0.1",
        "::ffff:0:a00:1",
        "64:ff9b::7f00:1",
        // The local-use NAT64 prefix (RFC 8215), which a network's own translator may route to its private hosts.
        "64:ff9b:1::a00:1",
        "64:ff9b:1::808:808",
        "2002:7f00:1::",
        "fd00::1",
        "fe80::1",
        "ff02::1",
        "2001:db8::1",
      ]
    ) expect(isPublicAddress(address), address).toBe(false);
  });

  it("let public addresses through, an IPv4 one embedded in IPv6 too", () => {
    for (const address of ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8", "::ffff:0:8.8.8.8", "64:ff9b::808:808"]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it("check the URL's host, written as a literal in any form, and what its name resolves to", async () => {
    await expect(checkWebhookUrl("https://[::ffff:0:127.0.0.1]/hook", new Set(), noDns)).rejects.toThrow(/loopback/);
    await expect(checkWebhookUrl("https://0177.0.0.1/hook", new Set(), noDns)).rejects.toThrow(/loopback/);
    await expect(checkWebhookUrl("https://hooks.example/", new Set(), () => Promise.resolve(["8.8.8.8", "10.0.0.1"])))
      .rejects.toThrow(/resolves to 10.0.0.1/);
    expect((await checkWebhookUrl("https://hooks.example/x", new Set(), () => Promise.resolve(["8.8.8.8"]))).href)
      .toBe("https://hooks.example/x");
    expect((await checkWebhookUrl("http://localhost:9/x", new Set(["localhost"]), noDns)).href)
      .toBe("http://localhost:9/x");
  });
});
