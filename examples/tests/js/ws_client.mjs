// A browser-style Bebop RPC client in plain JavaScript on Node's built-ins only: the
// WebSocket opening handshake and framing (RFC 6455) over `net`, and the Bebop wire format
// written and read by hand (docs/rpc.md, "WebSocket transport"). Run by the test
// `a_javascript_client_in_node` in rpc_websocket.rs, which checks what it prints.
//
//   node ws_client.mjs ws://127.0.0.1:PORT/path ECHO_METHOD_ID SAMPLES_METHOD_ID

import crypto from "node:crypto";
import net from "node:net";

const [url, echoId, samplesId] = process.argv.slice(2);
const { hostname, port, pathname } = new URL(url);
setTimeout(() => fail("timed out"), 10_000).unref();

function fail(why) {
  console.error(why);
  process.exit(1);
}

// --- WebSocket (client side) ---------------------------------------------------------

const BINARY = 0x2;
const CLOSE = 0x8;

// Opens a WebSocket; resolves to { send(opcode, bytes), next() } where next() resolves to
// the next message { opcode, payload }, or null once the server closed the connection.
function connect() {
  return new Promise((resolve, reject) => {
    const key = crypto.randomBytes(16).toString("base64");
    const accept = crypto
      .createHash("sha1")
      .update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
      .digest("base64");
    const socket = net.connect(Number(port), hostname);
    const queue = [];
    const waiting = [];
    let closed = false;
    let upgraded = false;
    let buf = Buffer.alloc(0);
    const deliver = (m) => (waiting.length ? waiting.shift()(m) : queue.push(m));

    const ws = {
      send(opcode, payload) {
        // Client frames are masked; a length of 126+ takes 2 more bytes, 65536+ takes 8.
        const mask = crypto.randomBytes(4);
        const n = payload.length;
        const head =
          n < 126
            ? Buffer.from([0x80 | opcode, 0x80 | n])
            : n < 65536
              ? Buffer.from([0x80 | opcode, 0x80 | 126, n >> 8, n & 0xff])
              : Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | 127]), u64be(n)]);
        const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]));
        socket.write(Buffer.concat([head, mask, masked]));
      },
      next() {
        if (queue.length) return Promise.resolve(queue.shift());
        if (closed) return Promise.resolve(null);
        return new Promise((r) => waiting.push(r));
      },
    };

    socket.on("connect", () =>
      socket.write(
        `GET ${pathname} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n` +
          "Upgrade: websocket\r\nConnection: Upgrade\r\n" +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      ),
    );
    socket.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const response = buf.subarray(0, end).toString();
        buf = buf.subarray(end + 4);
        if (!response.startsWith("HTTP/1.1 101") || !response.includes(accept)) {
          return reject(new Error(`handshake refused: ${response}`));
        }
        upgraded = true;
        resolve(ws);
      }
      // Server frames are unmasked; this server never fragments a message.
      for (;;) {
        if (buf.length < 2) return;
        const fin = buf[0] & 0x80;
        const opcode = buf[0] & 0x0f;
        let length = buf[1] & 0x7f;
        let at = 2;
        if (length === 126) {
          if (buf.length < 4) return;
          length = buf.readUInt16BE(2);
          at = 4;
        } else if (length === 127) {
          if (buf.length < 10) return;
          length = Number(buf.readBigUInt64BE(2));
          at = 10;
        }
        if (buf.length < at + length) return;
        if (!fin) fail("a fragmented message");
        deliver({ opcode, payload: buf.subarray(at, at + length) });
        buf = buf.subarray(at + length);
      }
    });
    socket.on("close", () => {
      closed = true;
      while (waiting.length) waiting.shift()(null);
    });
    socket.on("error", reject);
  });
}

function u64be(n) {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

// --- Bebop --------------------------------------------------------------------------

function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

// A string: its byte length, its UTF-8 bytes, a NUL.
const string = (s) => Buffer.concat([u32(Buffer.byteLength(s)), Buffer.from(s), Buffer.from([0])]);

// A CallHeader message calling methodId: length prefix, field 1 (method_id), end marker.
const callHeader = (methodId) =>
  Buffer.concat([u32(6), Buffer.from([0x01]), u32(methodId), Buffer.from([0x00])]);

// A frame on stream 0: length, flags, stream id, payload.
const frame = (flags, payload) =>
  Buffer.concat([u32(payload.length), Buffer.from([flags]), u32(0), payload]);

function parseFrame(bytes) {
  const length = bytes.readUInt32LE(0);
  const flags = bytes[4];
  const payload = bytes.subarray(9, 9 + length);
  const cursor = flags & 0x10 ? bytes.readBigUInt64LE(9 + length) : null;
  if (bytes.length !== 9 + length + (cursor === null ? 0 : 8)) fail("not exactly one frame");
  return { flags, payload, cursor };
}

const hex = (flags) => `0x${flags.toString(16).padStart(2, "0")}`;

// One call: the call header and the request, each in its own binary message; then every
// response frame, one per message, until the server closes (its close is answered).
async function call(methodId, request) {
  const ws = await connect();
  ws.send(BINARY, callHeader(methodId));
  ws.send(BINARY, frame(0x01, request)); // END_STREAM
  const frames = [];
  for (let m = await ws.next(); m !== null; m = await ws.next()) {
    if (m.opcode === BINARY) frames.push(parseFrame(m.payload));
    if (m.opcode === CLOSE) {
      frames.push({ close: m.payload.readUInt16BE(0) });
      ws.send(CLOSE, m.payload.subarray(0, 2));
    }
  }
  return frames;
}

// Unary: Echo(Note { text }).
for (const f of await call(Number(echoId), string("Hello from Node"))) {
  if (f.close !== undefined) console.log(`close: ${f.close}`);
  else {
    const text = f.payload.subarray(4, 4 + f.payload.readUInt32LE(0)).toString();
    console.log(`echo: ${JSON.stringify(text)} flags=${hex(f.flags)}`);
  }
}

// Server stream: Samples(Settings { interval_ms: 3 }), a message: its length, field 1, end.
const settings = Buffer.concat([u32(6), Buffer.from([0x01]), u32(3), Buffer.from([0x00])]);
for (const f of await call(Number(samplesId), settings)) {
  if (f.close !== undefined) console.log(`close: ${f.close}`);
  else if (f.flags & 0x01) console.log(`end: flags=${hex(f.flags)} length=${f.payload.length}`);
  else {
    // Sample { seq: uint32, value: float32 }
    const seq = f.payload.readUInt32LE(0);
    const value = f.payload.readFloatLE(4);
    console.log(`sample: seq=${seq} value=${value} cursor=${f.cursor}`);
  }
}
