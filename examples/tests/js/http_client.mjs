// A browser-style Bebop RPC client over HTTP/1.1 in plain JavaScript: only `fetch` (as in a
// browser; Node 18+ has it built in), the Bebop wire format written and read by hand
// (docs/rpc.md, "HTTP transport"). Run by the test `a_javascript_client_over_http` in
// rpc_proxy.rs, directly and through nginx, which checks what it prints.
//
//   node http_client.mjs http://127.0.0.1:PORT

const [base] = process.argv.slice(2);
setTimeout(() => fail("timed out"), 10_000).unref();

function fail(why) {
  console.error(why);
  process.exit(1);
}

const u32 = (n) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
};
const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const utf8 = new TextEncoder();
// A string: its byte length, its UTF-8 bytes, a NUL.
const string = (s) => {
  const bytes = utf8.encode(s);
  return concat(u32(bytes.length), bytes, new Uint8Array([0]));
};
const readString = (bytes) => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return new TextDecoder().decode(bytes.subarray(4, 4 + view.getUint32(0, true)));
};

// Unary: POST /Lab/Echo, a bare `Note { text }` in and out, metadata as headers.
{
  const response = await fetch(`${base}/Lab/Echo`, {
    method: "POST",
    headers: { "content-type": "application/bebop", "x-caller": "node" },
    body: string("Hello from fetch"),
  });
  const body = new Uint8Array(await response.arrayBuffer());
  console.log(
    `echo: ${response.status} ${response.headers.get("content-type")} ${JSON.stringify(readString(body))}`,
  );
}

// Unary with request metadata read back: Echo("md:x-caller") answers the header's value.
{
  const response = await fetch(`${base}/Lab/Echo`, {
    method: "POST",
    headers: { "content-type": "application/bebop", "x-caller": "node" },
    body: string("md:x-caller"),
  });
  console.log(`metadata: ${readString(new Uint8Array(await response.arrayBuffer()))}`);
}

// An error: the status mapping and bebop-status (Configure refuses interval_ms 1).
{
  const settings = concat(u32(6), new Uint8Array([0x01]), u32(1), new Uint8Array([0x00]));
  const response = await fetch(`${base}/Lab/Configure`, {
    method: "POST",
    headers: { "content-type": "application/bebop" },
    body: settings,
  });
  await response.arrayBuffer();
  console.log(`error: ${response.status} bebop-status=${response.headers.get("bebop-status")}`);
}

// Server stream: POST /Lab/Samples with a bare `Settings { interval_ms: 3 }`; the body is
// frames, read as they arrive from the response stream.
{
  const settings = concat(u32(6), new Uint8Array([0x01]), u32(3), new Uint8Array([0x00]));
  const response = await fetch(`${base}/Lab/Samples`, {
    method: "POST",
    headers: { "content-type": "application/bebop", accept: "application/bebop+stream" },
    body: settings,
  });
  console.log(`stream: ${response.status} ${response.headers.get("content-type")}`);
  const reader = response.body.getReader();
  let buf = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buf = concat(buf, value);
    // Every whole frame: 9-byte header (length, flags, stream id), payload, cursor.
    for (;;) {
      if (buf.length < 9) break;
      const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      const length = view.getUint32(0, true);
      const flags = buf[4];
      const size = 9 + length + (flags & 0x10 ? 8 : 0);
      if (buf.length < size) break;
      const payload = buf.subarray(9, 9 + length);
      if (flags & 0x01) {
        console.log(`end: flags=0x${flags.toString(16).padStart(2, "0")} length=${length}`);
      } else {
        const p = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
        const cursor = flags & 0x10 ? view.getBigUint64(9 + length, true) : null;
        console.log(`sample: seq=${p.getUint32(0, true)} value=${p.getFloat32(4, true)} cursor=${cursor}`);
      }
      buf = buf.subarray(size);
    }
    if (done) break;
  }
  if (buf.length !== 0) fail(`${buf.length} bytes left after the last frame`);
}
