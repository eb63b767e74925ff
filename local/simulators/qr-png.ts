// A real QR code as a PNG, as the gateway's pixQrCode answer carries it, so
// that apps show a code a phone can scan. qrcode-generator makes the matrix
// (pure JavaScript, no canvas, the same in Deno and Node); the PNG is written
// here: 8-bit greyscale, zlib through CompressionStream (both runtimes have it).
import qrcode from "qrcode-generator";

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

async function deflate(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The QR code of `text` as a base64 PNG, `scale` pixels a module, with the standard 4-module quiet zone. */
export async function qrPngBase64(text: string, scale = 6): Promise<string> {
  const qr = qrcode(0, "M");
  qr.addData(text);
  qr.make();
  const modules = qr.getModuleCount();
  const size = (modules + 8) * scale;
  const raw = new Uint8Array(size * (size + 1));
  for (let y = 0; y < size; y++) {
    const row = y * (size + 1);
    raw[row] = 0; // filter: none
    const my = Math.floor(y / scale) - 4;
    for (let x = 0; x < size; x++) {
      const mx = Math.floor(x / scale) - 4;
      const dark = mx >= 0 && my >= 0 && mx < modules && my < modules && qr.isDark(my, mx);
      raw[row + 1 + x] = dark ? 0 : 255;
    }
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, size);
  view.setUint32(4, size);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit greyscale, no interlace
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", await deflate(raw)),
    chunk("IEND", new Uint8Array()),
  ];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    png.set(part, offset);
    offset += part.length;
  }
  let binary = "";
  for (const b of png) binary += String.fromCharCode(b);
  return btoa(binary);
}
