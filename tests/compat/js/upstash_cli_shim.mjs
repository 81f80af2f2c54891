// Points the vendor's command-line tool, @upstash/cli (unchanged), at a svckit sandbox's developer API.
//
// Why a shim: the CLI has no setting for its API address. It is built in (dist/client.js:
// `const BASE_URL = "https://api.upstash.com"`) and every request goes through the global fetch. This
// module, loaded before the CLI with `node --import`, wraps globalThis.fetch:
//   - https://api.upstash.com/v2/X  ->  ${SVC_DEVAPI_URL}/X  (the sandbox's devapi base, ".../devapi/v2");
//   - a request to this machine (localhost, 127.0.0.0/8, ::1) passes unchanged (`redis exec --db-url`);
//   - any other request throws before it is sent: the CLI can never reach the network through it.
// The rewritten address must be on this machine too. Usage (what tests/compat/test_upstash_cli.py runs):
//   SVC_DEVAPI_URL=http://127.0.0.1:8123/devapi/v2 UPSTASH_EMAIL=... UPSTASH_API_KEY=... \
//     node --import ./upstash_cli_shim.mjs node_modules/@upstash/cli/dist/cli.js redis list
// or, for the installed `upstash` command: NODE_OPTIONS=--import=/abs/path/upstash_cli_shim.mjs upstash redis list
// (docs/sdk-compatibility.md, "The vendor's CLI").

const VENDOR_API = "https://api.upstash.com/v2/";
const LOCAL_SCHEMES = new Set(["data:", "blob:"]);
const realFetch = globalThis.fetch;

function isLoopback(hostname) {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The address a request for `url` is really sent to; throws for one that would leave this machine. */
export function reroute(url, devapiUrl = process.env.SVC_DEVAPI_URL) {
  let target = url;
  if (url.startsWith(VENDOR_API)) {
    if (!devapiUrl) {
      throw new Error("upstash_cli_shim: set SVC_DEVAPI_URL to the sandbox's developer API (…/devapi/v2)");
    }
    target = devapiUrl.replace(/\/+$/, "") + "/" + url.slice(VENDOR_API.length);
  }
  const parsed = new URL(target);
  const local = LOCAL_SCHEMES.has(parsed.protocol)
    || ((parsed.protocol === "http:" || parsed.protocol === "https:") && isLoopback(parsed.hostname));
  if (!local) {
    throw new Error(`upstash_cli_shim: refused a request off this machine: ${parsed.protocol}//${parsed.host}`);
  }
  return target;
}

globalThis.fetch = async function fetchThroughShim(input, init) {
  const isRequest = input instanceof Request;
  const url = isRequest ? input.url : String(input);
  const target = reroute(url);
  if (target === url) return realFetch(input, init);
  return realFetch(isRequest ? new Request(target, input) : target, init);
};
