// The part of http_ece (Encrypted Content-Encoding, RFC 8188) that the Web Push simulator and its test use: the
// package ships no types. Deno reads it untyped; this is for tsc.
declare module "http_ece" {
  import type { Buffer } from "node:buffer";
  import type { ECDH } from "node:crypto";

  interface Params {
    version?: "aes128gcm" | "aesgcm" | "aesgcm128";
    /** The receiver's key pair: with the sender's key (in the aes128gcm header), the shared secret. */
    privateKey?: ECDH;
    /** The Web Push auth secret, base64url or bytes. */
    authSecret?: string | Buffer;
    dh?: string | Buffer;
    key?: string | Buffer;
    salt?: string | Buffer;
    keyid?: string;
    rs?: number;
  }
  const ece: {
    decrypt(buffer: Buffer, params: Params): Buffer;
    encrypt(buffer: Buffer, params: Params): Buffer;
  };
  export default ece;
}
