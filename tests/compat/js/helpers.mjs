// What the JS compat files share (not a test file: test_js_sdks.py runs *.test.mjs only).
import assert from "node:assert/strict";
import { once } from "node:events";

/** Poll `read` until `done(value)`, every 50 ms for at most `ms`; the value. */
export async function until(read, done, what, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Start `server` on a free port of 127.0.0.1 (the sandbox delivers to loopback only); its base URL. */
export async function listening(server) {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${server.address().port}`;
}
